import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin
import HostPinTestSupport
import HostPinURL
import Synchronization
import Testing

/// Every interceptor suite, run one test at a time: `PinnedURLProtocol`'s resolver is process-wide,
/// and some tests install another one for a moment.
@Suite(.serialized) enum InterceptorTests {}

/// One pinned setup for the whole test process: `PinnedURLProtocol`'s resolver is process-wide.
enum PinnedLab {
    static let lab: Lab? = try? Lab.current()

    static let resolver: CountingResolver? = lab.flatMap { lab in
        (try? TrustedResolver(configuration: .lab([lab.trustedDNS]))).map { CountingResolver(CachingResolver(upstream: $0)) }
    }

    /// A session whose http(s) requests are pinned through ``resolver``, trusting the lab CA.
    static func session(delegate: (any URLSessionDelegate)? = nil, redirects: RedirectPolicy = .default,
                        plainHTTP: PinnedURLProtocol.PlainHTTPTransport = .urlSession, rules: Rules = Rules(),
                        observer: PinnedURLProtocol.Observer? = nil,
                        ranking: SharedAddressRanking? = SharedAddressRanking(),
                        base: URLSessionConfiguration = .ephemeral) throws -> URLSession {
        guard let resolver else { throw Lab.Problem.notRunning }
        return URLSession(configuration: .pinned(resolver: resolver, extraCAFile: lab?.caFile, redirects: redirects,
                                                 plainHTTP: plainHTTP, rules: rules, observer: observer,
                                                 ranking: ranking, base: base),
                          delegate: delegate, delegateQueue: nil)
    }

    /// Puts ``resolver`` back after a test installed another one.
    static func reinstall() {
        if let resolver { PinnedURLProtocol.install(resolver: resolver, extraCAFile: lab?.caFile) }
    }

    static func url(_ host: String, _ path: String, scheme: String = "http") throws -> URL {
        let port = scheme == "https" ? lab?.httpsPort : lab?.httpPort
        guard let port, let url = URL(string: "\(scheme)://\(host):\(port)\(path)") else {
            throw Lab.Problem.notRunning
        }
        return url
    }
}
