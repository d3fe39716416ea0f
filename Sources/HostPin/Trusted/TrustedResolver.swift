import Foundation

/// Resolves names through trusted upstream DNS servers only, with c-ares.
///
/// Each upstream gets its own c-ares channel and owner thread, so HostPin knows which upstream answered
/// and decides failover itself (c-ares 1.18 does not remember failing servers). Servers are never taken
/// from the system configuration, and `/etc/hosts` is never consulted (c-ares lookups `"b"`).
/// IP literals and `localhost` are answered without a query. No caching: put a ``CachingResolver`` in front.
public final class TrustedResolver: HostResolver {
    /// The configuration the resolver was created with.
    public let configuration: Configuration
    private let channels: [AresChannel]

    /// Creates one channel per upstream.
    ///
    /// - Throws: ``ResolutionError/noUpstreams`` for an empty list, ``ResolutionError/setupFailed(_:)``
    ///   when c-ares cannot create a channel.
    public init(configuration: Configuration) throws(ResolutionError) {
        guard !configuration.upstreams.isEmpty else { throw .noUpstreams }
        self.configuration = configuration
        var channels: [AresChannel] = []
        for upstream in configuration.upstreams {
            channels.append(try AresChannel(server: upstream, timeout: configuration.timeout,
                                            tries: configuration.tries, useTCP: configuration.useTCP))
        }
        self.channels = channels
    }

    /// Creates a resolver for `upstreams` with default settings.
    ///
    /// - Throws: as ``init(configuration:)``.
    public convenience init(upstreams: [Upstream]) throws(ResolutionError) {
        try self.init(configuration: Configuration(upstreams: upstreams))
    }

    /// Resolves `name` through the trusted upstreams only, asking for A and/or AAAA.
    ///
    /// Upstreams are tried in configuration order; one that times out or answers SERVFAIL or REFUSED is
    /// skipped. NXDOMAIN and NODATA are answers, not failures: they end the resolution. `ttl` is the
    /// smallest TTL on the answer, CNAME records included, in seconds.
    ///
    /// - Parameters:
    ///   - name: A normalised name (``HostName/parse(_:)``).
    ///   - family: A (`v4`), AAAA (`v6`) or both (`any`).
    /// - Returns: A ``Resolution`` with source ``Resolution/Source/upstream`` (``Resolution/Source/literal``
    ///   for IP literals and `localhost`).
    /// - Throws: ``ResolutionError/nxdomain(_:)`` on NXDOMAIN, ``ResolutionError/nodata(_:_:)`` on NODATA
    ///   (RFC 2308 §2.1, §2.2), ``ResolutionError/upstreamsFailed(_:)`` listing each upstream's failure,
    ///   ``ResolutionError/timeout(budget:_:)`` when ``Configuration/budget`` runs out, and
    ///   ``ResolutionError/cancelled`` when the calling task is cancelled.
    public func resolve(_ name: HostName, family: AddressFamily) async throws(ResolutionError) -> Resolution {
        if let literal = Resolution.literal(for: name, family: family) {
            guard !literal.addresses.isEmpty else { throw .nodata(name, family) }
            return literal
        }
        let attempts = Attempts()
        let budget = configuration.budget
        let outcome = await withTaskGroup(of: Result<Resolution, ResolutionError>?.self) { group in
            group.addTask { await self.tryUpstreams(name, family: family, recording: attempts) }
            group.addTask {
                try? await Task.sleep(for: budget)
                return Task.isCancelled ? nil : .failure(.timeout(budget: budget, attempts.failures))
            }
            defer { group.cancelAll() }
            while let next = await group.next() {
                if let result = next { return result }
            }
            return .failure(.cancelled)
        }
        if Task.isCancelled { throw .cancelled }
        return try outcome.get()
    }

    private func tryUpstreams(_ name: HostName, family: AddressFamily, recording attempts: Attempts) async
        -> Result<Resolution, ResolutionError>
    {
        for channel in channels {
            guard let upstream = channel.server else { continue }
            switch await channel.getaddrinfo(name.text, family: family) {
            case .answer(let reply):
                guard !reply.addresses.isEmpty else { return .failure(.nodata(name, family)) }
                return .success(Resolution(name: name, addresses: reply.addresses, cnames: reply.cnames,
                                           upstream: upstream, source: .upstream, receivedAt: Date()))
            case .cancelled:
                return .failure(.cancelled)
            case .status(let status):
                switch status.meaning {
                case .success: return .failure(.nodata(name, family))
                case .nxdomain: return .failure(.nxdomain(name))
                case .nodata: return .failure(.nodata(name, family))
                case .cancelled: return .failure(.cancelled)
                case .upstreamFailure(let reason):
                    attempts.record(UpstreamFailure(upstream: upstream, reason: reason))
                }
            }
        }
        return .failure(.upstreamsFailed(attempts.failures))
    }
}
