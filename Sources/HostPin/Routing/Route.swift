/// One route of split DNS: names at or below any of ``domains`` (by whole labels) are resolved through
/// ``upstreams`` only, never the default list, with this route's policy.
///
/// Dnsproxy's `[/corp.example/]10.0.0.53`, Unbound's `forward-zone`, CoreDNS's `forward` per zone: the
/// internal resolver answers internal names (often with RFC 1918 addresses, under a public parent that
/// is signed), so a route's defaults differ from the default list's: private addresses allowed, DNSSEC
/// off unless a trust anchor is given, serve-stale on. A route is checked when a ``RouteTable`` is made
/// from it (``RouteError``).
public struct Route: Sendable, Hashable, CustomStringConvertible {
    /// The domains this route takes, each with every name below it: `corp.test` takes `www.corp.test`,
    /// not `xcorp.test`. Reverse zones are domains too (`168.192.in-addr.arpa`).
    public var domains: [HostName]
    /// The upstreams asked for this route's names, in preference order (any form: plain, DoH, DoT),
    /// with their own failover, hold-down and health.
    public var upstreams: [Upstream]
    /// Whether this route's names may resolve to private and other special-purpose addresses through the
    /// proxy and the interceptor (the rebinding guard lets them through). Default: true, since internal
    /// resolvers answer RFC 1918 addresses.
    public var allowPrivate: Bool = true
    /// How this route's answers are validated, with chains built from the route's own upstreams only.
    /// Default: ``DNSSECConfiguration/off``: an internal zone under a signed public parent is insecurely
    /// delegated or not delegated at all, which validation from the root calls bogus (the classic
    /// split-horizon break). Give a trust anchor to validate (``DNSSECMode/validate``).
    public var dnssec: DNSSECConfiguration = .off
    /// Whether an expired answer of this route may be served while its upstreams fail (RFC 8767), when
    /// the cache serves stale at all. Default: true.
    public var serveStale: Bool = true

    /// A route for `domains` through `upstreams`, every policy at its default.
    public init(domains: [HostName], upstreams: [Upstream]) {
        self.domains = domains
        self.upstreams = upstreams
    }

    /// `corp.test,10.in-addr.arpa=10.0.0.53,10.0.0.54`: the command line's form.
    public var description: String {
        domains.map(\.text).joined(separator: ",") + "=" + upstreams.map(\.description).joined(separator: ",")
    }
}
