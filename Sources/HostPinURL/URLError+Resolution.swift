import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin

extension URLError {
    /// The `URLError` an application sees when HostPin cannot resolve the request's host:
    /// NXDOMAIN/NODATA → `.cannotFindHost`; upstream failure, budget timeout, no upstreams, a broken
    /// resolver or a DNSSEC-bogus answer → `.dnsLookupFailed`; an invalid host name → `.badURL`; cancellation → `.cancelled`.
    /// The failing URL is the request's original URL; the message is the resolver's sentence.
    init(_ error: ResolutionError, url: URL?) {
        let code: URLError.Code
        switch error {
        case .nxdomain, .nodata: code = .cannotFindHost
        case .upstreamsFailed, .timeout, .noUpstreams, .setupFailed, .dnssecBogus: code = .dnsLookupFailed
        case .badName: code = .badURL
        case .cancelled: code = .cancelled
        }
        self.init(code, url: url, description: error.description)
    }

    /// A `URLError` of `code` naming `url` (the original URL, never the pinned one) and saying `description`.
    init(_ code: URLError.Code, url: URL?, description: String) {
        var info: [String: Any] = [NSLocalizedDescriptionKey: description]
        if let url { info[NSURLErrorFailingURLErrorKey] = url }
        self.init(code, userInfo: info)
    }
}
