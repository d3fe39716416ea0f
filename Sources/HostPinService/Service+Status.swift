import HostPin
import HostPinNet

/// Where a running ``Service`` listens, as bound (a port 0 of the configuration is the kernel's port here).
public struct ServiceListeners: Sendable, Equatable {
    /// The DNS stub's addresses (UDP and TCP on each).
    public var dns: [SocketAddress]
    /// The proxy's address, when it runs.
    public var proxy: SocketAddress?
    /// The metrics endpoint's address, when it runs.
    public var metrics: SocketAddress?
    /// The control socket's path, when there is one.
    public var control: String?
}

/// What a running ``Service`` has done: the cache's counters (what `hostpin ctl stats` prints), the
/// upstreams in force and their health, the reloads applied.
public struct ServiceStatistics: Sendable {
    /// The cache's entries and counters since the start.
    public var cache: ResolutionCache.Statistics
    /// The trusted upstreams in force, in the order they are asked.
    public var upstreams: [Upstream]
    /// The upstreams' health (healthy, held down, probing: ``UpstreamHealth/status(of:)``), read live.
    public var health: UpstreamHealth
    /// Reloads applied since the start.
    public var reloads: Int
    /// The rules in force.
    public var ruleCount: Int
}

extension Service {
    /// Where the service listens, as bound.
    public var listeners: ServiceListeners {
        ServiceListeners(dns: dnsServers.flatMap { $0.server.boundAddresses }, proxy: proxy?.address,
                         metrics: endpointAddress, control: control == nil ? nil : configuration.controlSocket)
    }

    /// The cache's counters, the upstreams in force, their health and the reloads so far.
    public var statistics: ServiceStatistics {
        let current = upstream.current
        return ServiceStatistics(cache: cache.cache.statistics, upstreams: current.configuration.upstreams,
                                 health: current.health, reloads: reloads, ruleCount: configuration.rules.count)
    }

    /// The service's resolver: the cache in front of the trusted upstreams in force (what the stub and
    /// the proxy ask), for a program that embeds the service and resolves through it too.
    public nonisolated var resolver: CachingResolver { cache }
}
