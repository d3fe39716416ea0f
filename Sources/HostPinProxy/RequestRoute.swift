import Foundation
import HostPin

/// What the rules make of one absolute-form request (``RuleRouter``).
enum RequestRoute: Sendable {
    /// Send the request on to an origin.
    case forward(ForwardTarget)
    /// Answer it from the proxy: a `respond` rule's response, or a `redirect` rule's 3xx.
    case answer(LocalAnswer)
    /// Refuse it with this error.
    case refuse(ProxyError)
}

/// What the rules make of one CONNECT request (``RuleRouter``).
enum TunnelRoute: Sendable {
    /// Open the tunnel to `authority`, at these addresses.
    case open(RequestTarget.Authority, PinnedAddresses)
    /// Refuse it with this error.
    case refuse(ProxyError)
}

/// A route and the rules that decided it, in order: a transparent redirect's rule, then its target's.
struct Routed<Route: Sendable>: Sendable {
    let route: Route
    let rules: [RuleReference]
}

/// Where and how an absolute-form request is forwarded.
struct ForwardTarget: Sendable {
    /// The origin: the request's own, or a transparent redirect's target (whose `Host` is sent).
    let authority: RequestTarget.Authority
    /// The origin-form target sent: the request's own path and query, or the redirect target's.
    let path: String
    /// Resolve the authority's host, or a `pin` rule's addresses.
    let addresses: PinnedAddresses
    /// The `header` rules' edits for this URL, in order.
    let headerEdits: [HeaderEdit]
}

/// A response the proxy makes itself, without any origin.
struct LocalAnswer: Sendable {
    let status: Int
    /// The header fields, `Content-Length` included.
    let headers: [(name: String, value: String)]
    /// Empty for `HEAD` and bodiless statuses.
    let body: Data
}
