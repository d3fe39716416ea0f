import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `Authorization` and `Cookie` header fields an application set on its request: credentials for
/// that request's origin (scheme, host and port, RFC 6454 §4), which a redirect hop carries only when it
/// goes to that same origin. This is curl's rule for user-given headers: like curl, it compares each hop
/// with the FIRST request, so a hop back to its origin carries them again.
///
/// Cookies the session added from its cookie storage are not among them: the storage's cookies are
/// chosen again for each hop's URL (and sent after the application's own).
struct OriginCredentials: Sendable {
    /// RFC 6454 §4: lower-case scheme and host, and the port with the scheme's default filled in.
    private struct Origin: Equatable, Sendable {
        let scheme: String
        let host: String
        let port: Int

        init?(_ url: URL?) {
            guard let url, let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
            self.scheme = scheme
            self.host = host
            port = url.port ?? (scheme == "https" ? 443 : 80)
        }
    }

    private let origin: Origin?
    private let authorization: String?
    /// The application's own `name=value` pairs of the `Cookie` field, in order.
    private let cookies: [String]

    /// The credentials `request` (the application's, as the protocol received it) carries.
    ///
    /// swift-corelibs-foundation fills `Cookie` from the session's cookie storage before a protocol sees
    /// the request: the pairs the storage holds for the URL are the session's, the rest the application's.
    init(of request: URLRequest, cookieStorage: HTTPCookieStorage?) {
        origin = Origin(request.url)
        authorization = request.value(forHTTPHeaderField: "Authorization")
        let stored = Set(Self.storedPairs(for: request.url, in: cookieStorage))
        cookies = Self.pairs(request.value(forHTTPHeaderField: "Cookie")).filter { !stored.contains($0) }
    }

    /// Sets `request`'s (a redirect hop's) `Authorization` and `Cookie`: these credentials when it goes
    /// to their origin, then the storage's cookies for its URL unless the request handles no cookies.
    func apply(to request: inout URLRequest, cookieStorage: HTTPCookieStorage?) {
        let sameOrigin = origin != nil && Origin(request.url) == origin
        request.setValue(sameOrigin ? authorization : nil, forHTTPHeaderField: "Authorization")
        var pairs = sameOrigin ? cookies : []
        if request.httpShouldHandleCookies { pairs += Self.storedPairs(for: request.url, in: cookieStorage) }
        request.setValue(pairs.isEmpty ? nil : pairs.joined(separator: "; "), forHTTPHeaderField: "Cookie")
    }

    /// The `name=value` pairs of a `Cookie` field (RFC 6265 §4.2.1: separated by `; `).
    private static func pairs(_ field: String?) -> [String] {
        (field ?? "").split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The pairs `storage` sends to `url`, formatted as Foundation formats them.
    private static func storedPairs(for url: URL?, in storage: HTTPCookieStorage?) -> [String] {
        guard let url, let cookies = storage?.cookies(for: url), !cookies.isEmpty else { return [] }
        return pairs(HTTPCookie.requestHeaderFields(with: cookies)["Cookie"])
    }
}
