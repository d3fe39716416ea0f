import CCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin
import Synchronization

/// Sends pinned requests with libcurl, keeping the ORIGINAL host name in the URL: `CURLOPT_CONNECT_TO`
/// makes curl connect to the pinned addresses (``CurlPinning``: racing them as Happy Eyeballs does, and
/// reusing only a connection to the same address set), while the
/// `Host` header, TLS SNI and certificate verification all use the name, as they must (an IP in an https URL breaks SNI and the certificate
/// check, and URLSession on Linux offers no way around it). Verification is never turned off.
///
/// Every transfer runs on one thread that drives a curl multi handle (`curl_multi_poll`, woken by
/// `curl_multi_wakeup`): curl handles are only ever touched there.
final class CurlTransport: Transport {
    /// How TLS peers are verified. Verification itself is always on.
    struct TLS: Sendable, Hashable {
        /// A PEM file of extra trusted CA certificates, trusted IN ADDITION to the system's CAs.
        var extraCAFile: String?
    }

    private static let transports = Mutex<[TLS: CurlTransport]>([:])

    /// The process-wide transport for `tls` (one curl multi handle and thread each).
    static func shared(_ tls: TLS) -> CurlTransport {
        transports.withLock { transports in
            if let existing = transports[tls] { return existing }
            let created = CurlTransport(tls: tls)
            transports[tls] = created
            return created
        }
    }

    /// Closes the kept connections of every transport made so far (``CurlMulti/closeConnections()``).
    static func closeAllConnections() {
        let all = transports.withLock { Array($0.values) }
        for transport in all { transport.multi.closeConnections() }
    }

    let tls: TLS
    private let multi: CurlMulti
    /// Curl waits for each client call: flow control.
    let waitsForClient = true

    private init(tls: TLS) {
        self.tls = tls
        multi = CurlMulti()
    }

    func start(_ request: PinnedRequest, to addresses: [IPAddress], attemptDelay: Duration, reportsConnections: Bool,
               feed: RankingFeed?, sink: any TransferSink) -> any TransferHandle {
        let job = CurlJob(request: request.original, body: request.body, pinning: request.curlPinning(to: addresses),
                          attemptDelay: attemptDelay, reportsConnections: reportsConnections, tls: tls, feed: feed,
                          sink: sink)
        let id = multi.submit(job)
        return Handle(id: id, multi: multi)
    }

    /// Starts sending `request` with curl resolving its name through the system (no `CURLOPT_CONNECT_TO`):
    /// for hosts a `pass` rule leaves to the system. A kept-alive connection made this way is never
    /// reused for a pinned request, whose connect-to entry it lacks.
    func startResolvingBySystem(_ request: PinnedRequest, reportsConnections: Bool, sink: any TransferSink)
        -> any TransferHandle
    {
        let job = CurlJob(request: request.original, body: request.body, pinning: nil, attemptDelay: nil,
                          reportsConnections: reportsConnections, tls: tls, feed: nil, sink: sink)
        return Handle(id: multi.submit(job), multi: multi)
    }

    private struct Handle: TransferHandle {
        let id: Int
        let multi: CurlMulti

        func cancel() { multi.cancel(id) }
    }
}

/// Everything one curl transfer needs, handed from the caller to the multi thread.
struct CurlJob: Sendable {
    let request: URLRequest
    let body: RequestBody
    /// Where the transfer connects: its pinned addresses; `nil` for a URL naming an IP literal, and for
    /// a host a `pass` rule leaves to the system's resolver.
    let pinning: CurlPinning?
    /// `CURLOPT_HAPPY_EYEBALLS_TIMEOUT_MS`; `nil` keeps curl's default.
    let attemptDelay: Duration?
    /// Whether the sink hears of each connection attempt (`CURLOPT_OPENSOCKETFUNCTION`) and the
    /// response's address (`CURLINFO_PRIMARY_IP`).
    let reportsConnections: Bool
    let tls: CurlTransport.TLS
    /// Where the connection's verified time and a failed certificate are reported; `nil` for none (no
    /// ranking, or a host curl resolves itself).
    let feed: RankingFeed?
    let sink: any TransferSink
}

enum CurlLibrary {
    /// `curl_global_init` once per process, before the first handle. FoundationNetworking shares this
    /// libcurl and initialises it too; the call is reference-counted and, since curl 7.84, thread-safe.
    static func initialiseOnce() { _ = initialised }
    private static let initialised: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

    /// The CA directory libcurl was built with (Debian: /etc/ssl/certs), so an extra CA file can be
    /// trusted in addition to the system's CAs rather than instead of them.
    static let defaultCAPath: String? = {
        guard let info = curl_version_info(HOSTPIN_CURLVERSION_NOW), let path = info.pointee.capath else { return nil }
        return String(cString: path)
    }()
}
