import HostPin
import HostPinTestSupport
import Testing

/// What a scrape reads: the exposition's families with exact values after a known sequence, and the
/// health a `/healthz` reports, against the lab's NSD and a `scripts/fault-dns` instance.
@Suite(.serialized) struct ServiceMetricsTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    private func trusted(_ upstreams: [Upstream], clock: ManualClock = ManualClock(), timeout: Duration? = nil) throws
        -> TrustedResolver
    {
        // Fault servers of the test's own, which cannot answer DS/DNSKEY: DNSSEC off.
        var configuration = TrustedResolver.Configuration.ownServer(upstreams)
        configuration.budget = .seconds(20)
        configuration.tries = 1
        if let timeout { configuration.timeout = timeout }
        return try TrustedResolver(configuration: configuration, clock: clock)
    }

    /// The sample lines of `exposition` (no comments), as `name{labels} value`.
    private static func samples(_ exposition: String) -> Set<String> {
        Set(exposition.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init))
    }

    @Test func cacheAndUpstreamFamiliesCountAKnownSequence() async throws {
        let trusted = try trusted([lab.trustedDNS])
        let caching = CachingResolver(upstream: trusted)
        for _ in 0..<3 { _ = try await caching.resolve("www.example.test", family: .v4) }  // one miss, two hits
        _ = try? await caching.resolve("nx.example.test", family: .v4)                     // a miss, kept negative
        _ = try? await caching.resolve("nx.example.test", family: .v4)                     // a negative hit
        let proxy = ProxyMetrics()
        proxy.recordRequest(.http, status: 200)
        proxy.recordRequest(.connect, status: 200)
        proxy.recordRequest(.http, status: 200)
        proxy.recordRequest(.http, status: 1200)  // outside 100–999: counted as 502
        proxy.connectionOpened()
        proxy.connectionOpened()
        proxy.connectionClosed()
        proxy.addRelayed(100, .toClient)
        proxy.addRelayed(7, .toOrigin)
        proxy.countSinkhole()
        proxy.countSinkhole()
        let metrics = ServiceMetrics(resolver: trusted, cache: caching.cache, proxy: proxy)
        let exposition = metrics.exposition()
        let samples = Self.samples(exposition)
        let upstream = "upstream=\"\(lab.trustedDNS)\""
        for line in [
            "hostpin_cache_hits_total 2", "hostpin_cache_negative_hits_total 1", "hostpin_cache_misses_total 2",
            "hostpin_cache_stale_served_total 0", "hostpin_cache_refreshes_total 0", "hostpin_cache_entries 2",
            "hostpin_upstream_queries_total{\(upstream)} 2", "hostpin_upstream_failures_total{\(upstream),reason=\"timeout\"} 0",
            "hostpin_upstream_round_trip_seconds_count{\(upstream)} 2", "hostpin_upstream_round_trip_seconds_bucket{\(upstream),le=\"+Inf\"} 2",
            "hostpin_upstream_healthy{\(upstream)} 1", "hostpin_upstream_consecutive_failures{\(upstream)} 0",
            "hostpin_proxy_requests_total{kind=\"http\",code=\"200\"} 2", "hostpin_proxy_requests_total{kind=\"connect\",code=\"200\"} 1",
            "hostpin_proxy_requests_total{kind=\"http\",code=\"502\"} 1", "hostpin_proxy_open_connections 1",
            "hostpin_proxy_connections_total 2", "hostpin_proxy_relayed_bytes_total{direction=\"to_client\"} 100",
            "hostpin_proxy_relayed_bytes_total{direction=\"to_origin\"} 7", "hostpin_proxy_sinkhole_addresses_total 2",
        ] {
            #expect(samples.contains(line), "missing \(line)")
        }
        #expect(!exposition.contains("hostpin_dns_queries_total"))  // no stub, no stub family
        #expect(samples.filter { $0.hasPrefix("hostpin_proxy_requests_total") }.count == 3)  // only codes seen
        #expect(exposition.contains("# TYPE hostpin_upstream_round_trip_seconds histogram\n"))
    }

    @Test func healthIsOkUntilNoTrustedUpstreamIsHealthyOrTheServiceStops() async throws {
        let silent = try await FaultServer(mode: .drop, upstream: nil)
        defer { silent.stop() }
        let clock = ManualClock()
        let trusted = try trusted([silent.address, lab.trustedDNS], clock: clock, timeout: .milliseconds(300))
        let metrics = ServiceMetrics(resolver: trusted, cache: ResolutionCache())
        #expect(metrics.health == ServiceHealth(stopping: false, upstreams: trusted.health))
        #expect(metrics.health.isHealthy && metrics.health.reason == "ok")

        _ = try await trusted.resolve("www.example.test", family: .v4)  // the silent server times out, NSD answers
        #expect(metrics.health.isHealthy)  // one healthy upstream is enough
        #expect(metrics.exposition().contains("hostpin_upstream_healthy{upstream=\"\(silent.address)\"} 0\n"))

        let lone = try self.trusted([silent.address], clock: clock, timeout: .milliseconds(300))
        let alone = ServiceMetrics(resolver: lone, cache: ResolutionCache())
        _ = try? await lone.resolve("www.example.test", family: .v4)
        #expect(!alone.health.isHealthy)
        #expect(alone.health.reason == "no trusted upstream is healthy (\(silent.address): held down after 1 failure, 1 s left)")
        #expect(alone.exposition().contains("hostpin_upstream_consecutive_failures{upstream=\"\(silent.address)\"} 1\n"))

        metrics.markStopping()
        #expect(!metrics.health.isHealthy && metrics.health.reason == "stopping")
    }

    @Test(arguments: [FaultServer.Mode.servfail, .refused])
    func oneNamesFailingAnswerLeavesTheServiceHealthy(mode: FaultServer.Mode) async throws {
        let fault = try await FaultServer(mode: mode, upstream: nil)
        defer { fault.stop() }
        let lone = try trusted([fault.address])
        let metrics = ServiceMetrics(resolver: lone, cache: ResolutionCache())
        _ = try? await lone.resolve("www.example.test", family: .v4)
        #expect(fault.queries.count == 1)
        // The upstream answered, only not for that name: reachable, so healthy, and /healthz ok.
        #expect(metrics.health.isHealthy && metrics.health.reason == "ok")
        let samples = Self.samples(metrics.exposition())
        #expect(samples.contains("hostpin_upstream_healthy{upstream=\"\(fault.address)\"} 1"))
        #expect(samples.contains("hostpin_upstream_consecutive_failures{upstream=\"\(fault.address)\"} 0"))
        #expect(samples.contains("hostpin_upstream_failures_total{upstream=\"\(fault.address)\",reason=\"\(mode.name)\"} 1"))
    }
}
