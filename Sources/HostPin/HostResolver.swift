import Foundation

/// Resolves host names to addresses. One method, like OkHttp's `Dns`: implementations are the trusted
/// c-ares resolver, the caching resolver in front of it, and test doubles.
///
/// Implementations must be safe to call concurrently from any task.
public protocol HostResolver: Sendable {
    /// Resolves `name` to its addresses of `family`.
    ///
    /// - Parameters:
    ///   - name: A normalised name (see ``HostName/parse(_:)``).
    ///   - family: The address records asked for.
    /// - Returns: A ``Resolution`` with at least one address.
    /// - Throws: ``ResolutionError``: `.nxdomain`, `.nodata`, `.upstreamsFailed`, `.timeout`, `.cancelled`, …
    func resolve(_ name: HostName, family: AddressFamily) async throws(ResolutionError) -> Resolution

    /// Resolves `name` as ``resolve(_:family:)`` does, returning a negative answer (NXDOMAIN, NODATA)
    /// as a value with its SOA record and CNAME chain instead of throwing it, and how long the answer
    /// may still be used.
    ///
    /// The default implementation calls ``resolve(_:family:)``: its negative answers carry no SOA record
    /// (so a cache does not keep them) and `ttlLeft` is the answer's TTL.
    ///
    /// - Throws: ``ResolutionError`` for every failure but `.nxdomain` and `.nodata`.
    func resolveDetailed(_ name: HostName, family: AddressFamily) async throws(ResolutionError) -> ResolutionOutcome

    /// The addresses a fresh cache entry holds for `name` and `family`, read without building a
    /// ``Resolution`` and without waiting; `nil` when there is none (then ``resolve(_:family:)`` answers).
    /// The proxy and the interceptor ask it first on every request, then resolve on `nil` (which counts
    /// the miss in the cache's statistics: this does not). The default is `nil`:
    /// a resolver with no cache of its own; ``CachingResolver`` answers from its cache.
    func cachedAddresses(_ name: HostName, family: AddressFamily) -> CachedAddresses?

    /// Whether `name`, of a special-use zone that may be routed (``SpecialUseName/mayBeRouted``: the
    /// reverse zones, `home.arpa`), goes to a route's upstreams (``RouteTable``) instead of being answered
    /// locally; asked only for such names, never on a cache hit of any other. The default is false.
    func routesSpecialUse(_ name: HostName) -> Bool

    /// Whether `name`'s route lets it resolve to private and other special-purpose addresses
    /// (``Route/allowPrivate``): the rebinding guard of the proxy and the interceptor asks, only for an
    /// answer it would refuse. The default is false: a name outside every route never may.
    func allowsPrivateAddresses(for name: HostName) -> Bool

    /// Whether an expired answer for `name` may be served stale (RFC 8767) when the cache's policy
    /// allows it: false for a route that says so (``Route/serveStale``). Asked only on the way to a stale
    /// answer. The default is true.
    func servesStale(_ name: HostName) -> Bool
}

extension HostResolver {
    public func routesSpecialUse(_ name: HostName) -> Bool { false }

    public func cachedAddresses(_ name: HostName, family: AddressFamily) -> CachedAddresses? { nil }

    public func allowsPrivateAddresses(for name: HostName) -> Bool { false }

    public func servesStale(_ name: HostName) -> Bool { true }

    public func resolveDetailed(_ name: HostName, family: AddressFamily) async throws(ResolutionError)
        -> ResolutionOutcome
    {
        do throws(ResolutionError) {
            let resolution = try await resolve(name, family: family)
            return ResolutionOutcome(answer: .addresses(resolution), ttlLeft: resolution.ttl, age: 0)
        } catch {
            let kind: NegativeAnswer.Kind
            switch error {
            case .nxdomain: kind = .nxdomain
            case .nodata: kind = .nodata
            default: throw error
            }
            let negative = NegativeAnswer(name: name, family: family, kind: kind, cnames: [], soa: nil, upstream: nil,
                                          source: .upstream, receivedAt: Date())
            return ResolutionOutcome(answer: .negative(negative), ttlLeft: 0, age: 0)
        }
    }

    /// Resolves `name` to A and AAAA addresses (family `any`).
    public func resolve(_ name: HostName) async throws(ResolutionError) -> Resolution {
        try await resolve(name, family: .any)
    }

    /// Parses and normalises `name`, then resolves it.
    ///
    /// - Parameters:
    ///   - name: A host name as a user writes it: any case, Unicode or A-labels, optional trailing dot,
    ///     or an IP literal.
    ///   - family: The address records asked for; `any` by default.
    /// - Throws: ``ResolutionError/badName(_:_:)`` for an invalid name, else what ``resolve(_:family:)`` throws.
    public func resolve(_ name: String, family: AddressFamily = .any) async throws(ResolutionError) -> Resolution {
        try await resolve(HostName.parse(name), family: family)
    }
}
