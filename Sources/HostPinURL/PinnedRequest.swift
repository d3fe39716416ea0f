import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin

/// An application's request and the ways to send it to one pinned address.
///
/// For the inner URLSession (plain HTTP to IPv4): the URL's host replaced by the address and `Host`
/// carrying the original authority (RFC 9110 §7.2). Such a request names an IP literal, which
/// ``PinnedURLProtocol/canInit(with:)`` refuses: that is what keeps the interceptor from intercepting its
/// own requests. (`URLProtocol.setProperty` marks do not survive `URLRequest` copies in
/// swift-corelibs-foundation: `protocolProperties` lives on `NSMutableURLRequest` only and is not copied.)
///
/// For libcurl (HTTPS, IPv6, both families, and plain HTTP when asked): the URL unchanged plus a
/// ``CurlPinning``.
struct PinnedRequest: Sendable {
    /// The request to send to the name: the application's (or a redirect hop's), with the rules' header
    /// edits applied.
    let original: URLRequest
    /// The same request before the rules' header edits: the next redirect hop is built from it, so an
    /// edit made for this host never reaches another.
    let unedited: URLRequest
    let url: URL
    /// The URL the application sees in the response: `url`, or the URL it asked for when a rule
    /// redirected the request transparently.
    let presentedURL: URL
    let host: String
    /// The port the URL names or its scheme's default.
    let port: Int
    /// The body to send, wherever Foundation kept it.
    let body: RequestBody

    /// - Parameters:
    ///   - unedited: `original` before the rules' header edits; `original` itself by default.
    ///   - presentedURL: The URL the response carries; `original`'s by default.
    /// - Returns: `nil` when `original` has no URL with a host.
    init?(_ original: URLRequest, body: RequestBody = .none, unedited: URLRequest? = nil, presentedURL: URL? = nil) {
        guard let url = original.url, let host = url.host, !host.isEmpty else { return nil }
        self.original = original
        self.unedited = unedited ?? original
        self.url = url
        self.presentedURL = presentedURL ?? url
        self.host = host
        self.port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
        self.body = body
    }

    /// The host as the address ranking knows it: the normalised name (lower case, A-labels), as the
    /// resolver and the proxy name it, so rankings learnt by either apply to both.
    var rankingName: String { (try? HostName.parse(host))?.description ?? host.lowercased() }

    /// The request for the inner URLSession: same method, headers, body and timeout; `address` as the
    /// URL's host; `Host` set to the original authority.
    func addressed(to address: IPAddress) -> URLRequest? {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        components.percentEncodedHost = address.uriHost
        components.scheme = components.scheme?.lowercased()  // FoundationNetworking refuses "HTTP://"
        guard let pinnedURL = components.url else { return nil }
        var pinned = original
        pinned.url = pinnedURL
        pinned.setValue(Self.hostHeader(host: host, port: url.port, scheme: url.scheme), forHTTPHeaderField: "Host")
        // The application's session owns caching and cookies; the inner request must not add its own.
        pinned.cachePolicy = .reloadIgnoringLocalCacheData
        pinned.httpShouldHandleCookies = false
        switch body {
        case .none:
            break
        case .data(let data):
            pinned.httpBody = data
        case .file, .stream:
            // FoundationNetworking sends a stream body chunked; a Content-Length beside it would conflict.
            pinned.httpBody = nil
            pinned.httpBodyStream = body.inputStream()
        }
        return pinned
    }

    /// Where curl connects to reach `addresses` (in the order to attempt them) on the URL's port
    /// (``CurlPinning``); `nil` when the URL names an IP literal, which curl connects to without any
    /// resolution.
    ///
    /// The empty host and port in front of the connect-to entry match whatever curl makes of the URL's
    /// name (each easy handle carries one URL), so no spelling of the name (case, a trailing dot) can miss
    /// the entry and fall back to the system's resolver.
    func curlPinning(to addresses: [IPAddress]) -> CurlPinning? {
        guard IPAddress(host) == nil else { return nil }
        return CurlPinning(addresses, port: port)
    }

    /// `host` or `host:port`, the port only when it is not the scheme's default (RFC 9110 §7.2, §4.2.1).
    static func hostHeader(host: String, port: Int?, scheme: String?) -> String {
        let defaultPort = scheme?.lowercased() == "https" ? 443 : 80
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        guard let port, port != defaultPort else { return bracketed }
        return "\(bracketed):\(port)"
    }

    /// `response` as the application must see it: the original URL, never the pinned address. When a
    /// rule redirected the request transparently, a relative `Location` is made absolute against the URL
    /// actually fetched, which the application does not see.
    func presenting(_ response: HTTPURLResponse) -> HTTPURLResponse {
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        if presentedURL != url, let name = headers.keys.first(where: { $0.lowercased() == "location" }),
           let location = headers[name], let absolute = URL(string: location, relativeTo: url)?.absoluteURL {
            headers[name] = absolute.absoluteString
        }
        return HTTPURLResponse(url: presentedURL, statusCode: response.statusCode, httpVersion: "HTTP/1.1",
                               headerFields: headers) ?? response
    }
}
