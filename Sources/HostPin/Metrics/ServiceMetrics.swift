import Synchronization

/// Everything a running HostPin service exposes to monitoring, in one place: the cache's statistics,
/// each trusted upstream's queries, failures, round trips and health, and, when the service runs them,
/// the DNS stub's and the proxy's counters. Collects and renders; sends nothing (an HTTP endpoint serves
/// it: HostPinProxy's `MetricsEndpoint`).
///
/// ```swift
/// let dns = DNSQueryMetrics()          // given to the DNS stub's responder
/// let metrics = ServiceMetrics(resolver: trusted, cache: caching.cache, dns: dns)
/// print(metrics.exposition())          // Prometheus text format 0.0.4
/// ```
///
/// Reading takes a snapshot of atomic counters and the cache's per-shard statistics (one lock per shard,
/// briefly); nothing on a query's path waits for a scrape. Thread-safe.
public final class ServiceMetrics: Sendable {
    /// The media type of ``exposition()``: the Prometheus text format, version 0.0.4.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// The trusted resolver in force: its upstreams' ``TrustedResolver/metrics`` and
    /// ``TrustedResolver/health`` (a service that reloads its upstreams gives the one in force at each scrape).
    public var resolver: TrustedResolver { currentResolver() }
    private let currentResolver: @Sendable () -> TrustedResolver
    /// The cache in front of it: its ``ResolutionCache/statistics``.
    public let cache: ResolutionCache
    /// The DNS stub's counters; `nil` when the service runs no stub.
    public let dns: DNSQueryMetrics?
    /// The proxy's counters; `nil` when the service runs no proxy.
    public let proxy: ProxyMetrics?
    /// What DNSSEC validation found for the trusted resolutions (`hostpin_dnssec_answers_total`), counted
    /// by whoever sits behind the cache (the service's upstream switch); `nil` leaves the family out.
    public let dnssec: DNSSECMetrics?
    /// The shared cache's lookups, writes and latency (`hostpin_shared_cache_*`); `nil` without one.
    public let sharedCache: SharedCacheMetrics?
    /// The watch of the local resolver, whose verdicts are counted (`hostpin_hijack_verdicts_total`);
    /// `nil` when the service compares nothing.
    public let watch: LocalResolverWatch?
    /// The names the watch found hijacked, newest first (the status page's list); `nil` without a watch.
    public let findings: HijackFindings?
    /// Network changes and the refreshes they caused, when the service watches the network.
    public let network: NetworkMetrics?
    /// Answers per second over the last hour (the status page's chart), sampled by the service.
    public let history: AnswerRateHistory
    /// The clock ``history`` and the uptime are read on.
    public let clock: any MonotonicClock
    /// When the metrics were made (the service's start), on ``clock``.
    let started: UInt64
    private let stopping = Atomic<Bool>(false)

    /// Metrics of a service resolving through `resolver` and `cache`, with its stub's and proxy's
    /// counters when it runs them.
    public convenience init(resolver: TrustedResolver, cache: ResolutionCache, dns: DNSQueryMetrics? = nil,
                            proxy: ProxyMetrics? = nil, watch: LocalResolverWatch? = nil, findings: HijackFindings? = nil,
                            dnssec: DNSSECMetrics? = nil) {
        self.init(currentResolver: { resolver }, cache: cache, dns: dns, proxy: proxy, watch: watch, findings: findings,
                  dnssec: dnssec)
    }

    /// Metrics of a service whose trusted resolver may be replaced while it runs (a reload):
    /// `currentResolver` gives the one in force, asked at each scrape and health check. `findings` are
    /// the watch's (``HijackFindings``); ``history`` starts empty now, on `clock`.
    public init(currentResolver: @escaping @Sendable () -> TrustedResolver, cache: ResolutionCache,
                dns: DNSQueryMetrics? = nil, proxy: ProxyMetrics? = nil, watch: LocalResolverWatch? = nil,
                findings: HijackFindings? = nil, dnssec: DNSSECMetrics? = nil,
                sharedCache: SharedCacheMetrics? = nil, network: NetworkMetrics? = nil,
                clock: any MonotonicClock = SystemMonotonicClock()) {
        self.network = network
        self.currentResolver = currentResolver
        self.cache = cache
        self.dns = dns
        self.proxy = proxy
        self.watch = watch
        self.findings = findings
        self.dnssec = dnssec
        self.sharedCache = sharedCache
        self.clock = clock
        started = clock.nanoseconds()
        history = AnswerRateHistory(now: started)
    }

    /// The service has begun to stop: ``health`` says so from now on.
    public func markStopping() {
        stopping.store(true, ordering: .relaxed)
    }

    /// Whether the service runs and can reach a healthy trusted upstream.
    public var health: ServiceHealth {
        ServiceHealth(stopping: stopping.load(ordering: .relaxed), upstreams: resolver.health)
    }

    /// Every metric now, in the Prometheus text format 0.0.4 (``contentType``); README.md, "Metrics",
    /// lists each family.
    public func exposition() -> String {
        var exposition = MetricsExposition()
        dns?.write(into: &exposition)
        Self.write(cache.statistics, into: &exposition)
        let resolver = resolver
        // The default list, then each route's upstreams (split DNS), labelled with the route's domains.
        UpstreamMetrics.write([(nil, resolver.metrics, resolver.health)] + resolver.routed.map { route, routed in
            (route.domains.map(\.text).joined(separator: ","), routed.metrics, routed.health)
        }, into: &exposition)
        dnssec?.write(into: &exposition)
        sharedCache?.write(into: &exposition)
        proxy?.write(into: &exposition)
        if let watch { Self.write(watch.statistics, into: &exposition) }
        network?.write(into: &exposition)
        return exposition.text
    }

    private static func write(_ statistics: LocalResolverWatch.Statistics, into exposition: inout MetricsExposition) {
        let name = "hostpin_hijack_verdicts_total"
        exposition.family(name, .counter,
                          help: "Comparisons of the trusted answers given with the local resolver's, by verdict.")
        for (verdict, count) in [("consistent", statistics.consistent), ("hijacked", statistics.hijacked),
                                 ("inconclusive", statistics.inconclusive)] {
            exposition.sample(name, labels: [("verdict", verdict)], count)
        }
    }

    private static func write(_ statistics: ResolutionCache.Statistics, into exposition: inout MetricsExposition) {
        let counters: [(String, String, Int)] = [
            ("hostpin_cache_hits_total", "Lookups answered from the cache with fresh addresses.", statistics.hits),
            ("hostpin_cache_negative_hits_total", "Lookups answered from the cache with a fresh NXDOMAIN or NODATA.",
             statistics.negativeHits),
            ("hostpin_cache_misses_total", "Lookups that found no fresh entry (absent or expired).", statistics.misses),
            ("hostpin_cache_stale_served_total", "Expired answers served because no upstream answered (RFC 8767).",
             statistics.staleServed),
            ("hostpin_cache_refreshes_total", "Background refreshes started (refresh-ahead, and names served stale).",
             statistics.refreshes),
        ]
        for (name, help, value) in counters {
            exposition.family(name, .counter, help: help)
            exposition.sample(name, UInt64(clamping: value))
        }
        exposition.family("hostpin_cache_entries", .gauge,
                          help: "Entries in the cache: positive and negative, fresh or kept to be served stale.")
        exposition.sample("hostpin_cache_entries", statistics.entries)
    }
}
