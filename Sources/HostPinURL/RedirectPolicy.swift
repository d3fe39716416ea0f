import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the interceptor does with a 3xx response that has a `Location`. It stands in for the session
/// delegate's `willPerformHTTPRedirection`, which a custom protocol cannot reach on Linux
/// (`URLProtocolClient.urlProtocol(_:wasRedirectedTo:redirectResponse:)` is a `fatalError` in
/// swift-corelibs-foundation), so the interceptor follows redirects itself.
public enum RedirectPolicy: Sendable {
    /// Follow as URLSession does by default, at most `maxHops` times (then fail with
    /// `.httpTooManyRedirects`): `Location` resolved against the current URL (RFC 9110 §10.2.2), each
    /// hop's host resolved and pinned on its own; 301/302 change POST to GET and 303 any method but
    /// HEAD to GET, dropping the body (RFC 9110 §15.4); 307/308 keep method and body. The request's own
    /// `Authorization` and `Cookie` go only to hops to its origin (scheme, host and port: curl's rule);
    /// the cookie storage's cookies are chosen again for each hop's URL.
    case follow(maxHops: Int)
    /// Hand every 3xx to the client as it is, `Location` in original-host form.
    case doNotFollow
    /// Ask per hop: return the next request (possibly changed) to follow, or `nil` to hand the 3xx to
    /// the client. The proposed request already has URLSession's method and body rules applied.
    case decide(@Sendable (_ response: HTTPURLResponse, _ proposed: URLRequest) -> URLRequest?)

    /// URLSession's default: follow, up to 16 hops.
    public static let `default` = RedirectPolicy.follow(maxHops: 16)
}
