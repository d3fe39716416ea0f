import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin

/// The request the interceptor sends for a pinned plain-HTTP request: the URL's host replaced by the
/// pinned address, and `Host` carrying the original authority (RFC 9110 §7.2).
///
/// The inner request always names an IP literal, which ``PinnedURLProtocol/canInit(with:)`` refuses:
/// that is what keeps the interceptor from intercepting its own requests. (`URLProtocol.setProperty`
/// marks do not survive `URLRequest` copies in swift-corelibs-foundation: `protocolProperties` lives on
/// `NSMutableURLRequest` only and is not copied.)
struct PinnedRequest: Sendable {
    /// The request as the application made it.
    let original: URLRequest
    /// The request to send: same method, headers, body and timeout; IP host; `Host` header set.
    let pinned: URLRequest

    /// Pins `original` to `address`.
    ///
    /// - Returns: `nil` when `original` has no URL or host to rewrite.
    init?(_ original: URLRequest, address: IPAddress) {
        guard let url = original.url, let host = url.host,
              var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return nil }
        components.percentEncodedHost = address.uriHost
        guard let pinnedURL = components.url else { return nil }
        var pinned = original
        pinned.url = pinnedURL
        pinned.setValue(Self.hostHeader(host: host, port: url.port, scheme: url.scheme), forHTTPHeaderField: "Host")
        // The application's session owns caching and cookies; the inner request must not add its own.
        pinned.cachePolicy = .reloadIgnoringLocalCacheData
        pinned.httpShouldHandleCookies = false
        self.original = original
        self.pinned = pinned
    }

    /// `host` or `host:port`, the port only when it is not the scheme's default (RFC 9110 §7.2, §4.2.1).
    static func hostHeader(host: String, port: Int?, scheme: String?) -> String {
        let defaultPort = scheme?.lowercased() == "https" ? 443 : 80
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        guard let port, port != defaultPort else { return bracketed }
        return "\(bracketed):\(port)"
    }

    /// `response` as the application must see it: the original URL, never the pinned address.
    func presenting(_ response: HTTPURLResponse) -> HTTPURLResponse {
        guard let url = original.url else { return response }
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        return HTTPURLResponse(url: url, statusCode: response.statusCode, httpVersion: "HTTP/1.1",
                               headerFields: headers) ?? response
    }
}
