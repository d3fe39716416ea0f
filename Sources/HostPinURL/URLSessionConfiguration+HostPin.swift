import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin

extension URLSessionConfiguration {
    /// A configuration whose HTTP and HTTPS requests go to the addresses `resolver` pins, after `rules`.
    ///
    /// Installs `resolver` process-wide for ``PinnedURLProtocol`` (Foundation creates protocol instances
    /// itself), with `base`'s cookie storage as the one redirect hops use, and puts ``PinnedURLProtocol``
    /// first in `protocolClasses`. Everything else about `base` is kept.
    ///
    /// ```swift
    /// let resolver = CachingResolver(upstream: try TrustedResolver(upstreams: [Upstream("9.9.9.9")!]))
    /// let session = URLSession(configuration: .pinned(resolver: resolver))
    /// ```
    ///
    /// - Parameters:
    ///   - resolver: The resolver to pin with, usually a `CachingResolver`.
    ///   - family: The address records asked for; `any` by default.
    ///   - extraCAFile: A PEM file of CA certificates trusted for HTTPS in addition to the system's.
    ///   - redirects: What to do with 3xx responses; URLSession's default (follow, 16 hops) by default.
    ///   - plainHTTP: What carries plain HTTP to IPv4 addresses; an inner URLSession by default.
    ///   - rules: Interception rules deciding each request first (README.md, "Rules"); none by default.
    ///     From a file: `rules: try Rules(contentsOf: URL(fileURLWithPath: "rules.json"))`.
    ///   - allowPrivate: Whether a resolved name may lead to private, loopback or link-local addresses
    ///     (RFC 6890); `true` by default. `false` turns the DNS-rebinding guard on (see
    ///     ``PinnedURLProtocol/install(resolver:family:extraCAFile:redirects:cookieStorage:plainHTTP:rules:allowPrivate:observer:ranking:)``).
    ///   - observer: Receives one event per request (``PinnedURLProtocol/Event``); `nil` by default.
    ///   - ranking: Where addresses are ranked by verified connection time (``AddressRanking``); a new one
    ///     for this configuration by default, `nil` to keep the answer order.
    ///   - base: The configuration to start from; `.default` by default.
    public static func pinned(resolver: any HostResolver, family: AddressFamily = .any, extraCAFile: String? = nil,
                              redirects: RedirectPolicy = .default,
                              plainHTTP: PinnedURLProtocol.PlainHTTPTransport = .urlSession,
                              rules: Rules = Rules(), allowPrivate: Bool = true,
                              observer: PinnedURLProtocol.Observer? = nil,
                              ranking: SharedAddressRanking? = SharedAddressRanking(),
                              base: URLSessionConfiguration = .default) -> URLSessionConfiguration {
        PinnedURLProtocol.install(resolver: resolver, family: family, extraCAFile: extraCAFile, redirects: redirects,
                                  cookieStorage: base.httpShouldSetCookies ? base.httpCookieStorage : nil,
                                  plainHTTP: plainHTTP, rules: rules, allowPrivate: allowPrivate, observer: observer,
                                  ranking: ranking)
        let configuration = base
        configuration.protocolClasses = [PinnedURLProtocol.self] + (base.protocolClasses ?? [])
        return configuration
    }
}
