import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin

extension URLError {
    /// The error of a request the DNS-rebinding guard refused (``PinnedURLProtocol`` with
    /// `allowPrivate: false`): `.resourceUnavailable`, as for a `block` rule (URLError has no code for a
    /// refusal by policy), saying `www.example.test resolves to 127.0.0.10, in special-purpose block
    /// 127.0.0.0/8 (loopback, RFC 1122); private targets are not allowed.`
    static func privateAddress(_ refusal: RebindingRefusal, url: URL?) -> URLError {
        var info: [String: Any] = [NSLocalizedDescriptionKey: refusal.description]
        if let url { info[NSURLErrorFailingURLErrorKey] = url }
        return URLError(.resourceUnavailable, userInfo: info)
    }
}
