import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPinURL

/// How a `hostpin fetch` transfer's end becomes an exit status (curl's numbers, README.md "The CLI")
/// and the one sentence printed to standard error.
enum FetchFailure {
    /// The exit status for `outcome` and the sentence to print (without `hostpin: `), `nil` on success.
    static func report(_ outcome: FetchTransfer.Outcome, url: URL, maxTime: Double?) -> (ExitStatus, String?) {
        switch outcome {
        case .completed:
            return (.success, nil)
        case .httpError(let status):
            // curl's own words.
            return (.httpError, "The requested URL returned error: \(status)")
        case .maxTimeExceeded(let received):
            let limit = maxTime.map { "\(Self.seconds($0)) s" } ?? "the time limit"
            return (.timedOut, "operation timed out after \(limit) (--max-time) with \(received) bytes received")
        case .writeFailed(let path, let reason):
            return (.transferFailed, "could not write to \(path): \(reason)")
        case .failed(let error, let responded):
            return report(error, responded: responded, url: url)
        }
    }

    /// The status and sentence for a `URLError`; the host named is the failing URL's (a redirect's
    /// target after `-L`), else the command line's.
    static func report(_ error: URLError, responded: Bool, url: URL) -> (ExitStatus, String) {
        let failing = (error.userInfo[NSURLErrorFailingURLErrorKey] as? URL) ?? url
        if let rule = error.userInfo[PinnedURLProtocol.ruleUserInfoKey] as? String {
            return (.blocked, "\(failing.absoluteString) is blocked by \(rule)")
        }
        let host = failing.host ?? ""
        let authority = failing.port.map { "\(host):\($0)" } ?? host
        var detail = Self.detail(of: error)
        // The resolver's sentences start with the name: say it once.
        if detail.hasPrefix(host + ": ") { detail.removeFirst(host.count + 2) }
        switch error.code {
        case .cannotFindHost, .dnsLookupFailed:
            return (.couldNotResolve, "could not resolve host \(host): \(detail)")
        case .cannotConnectToHost:
            return (.couldNotConnect, "could not connect to \(authority): \(detail)")
        case .networkConnectionLost where !responded:
            return (.couldNotConnect, "the connection to \(authority) was lost before a response: \(detail)")
        case .timedOut:
            return (.timedOut, "the request to \(authority) timed out: \(detail)")
        case .secureConnectionFailed:
            return (.tlsHandshakeFailed, "the TLS handshake with \(authority) failed: \(detail)")
        case .serverCertificateUntrusted, .serverCertificateHasUnknownRoot, .serverCertificateHasBadDate,
             .serverCertificateNotYetValid, .clientCertificateRejected:
            return (.certificateUntrusted, "the certificate of \(authority) is not trusted: \(detail)")
        case .httpTooManyRedirects:
            return (.tooManyRedirects, "too many redirects (more than \(FetchCommand.maxRedirects)) from \(url.absoluteString)")
        default:
            return (.transferFailed, "the transfer from \(authority) failed: \(detail)")
        }
    }

    /// The error's own sentence (HostPin's interceptor puts the resolver's or libcurl's message there),
    /// else a short one for its code.
    static func detail(of error: URLError) -> String {
        if let text = error.userInfo[NSLocalizedDescriptionKey] as? String, !text.isEmpty { return text }
        return switch error.code {
        case .cannotConnectToHost: "connection refused or unreachable"
        case .networkConnectionLost: "the connection was lost"
        case .timedOut: "no data within the time limit"
        case .cancelled: "cancelled"
        case .badServerResponse: "the server's response is not HTTP"
        default: "URL error \(error.code.rawValue)"
        }
    }

    /// `1`, `0.5`: seconds without a useless `.0`.
    private static func seconds(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
