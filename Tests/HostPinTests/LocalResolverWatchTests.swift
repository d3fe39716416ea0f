import Foundation
import HostPin
import HostPinTestSupport
import Synchronization
import Testing

/// The watch against real servers: the trusted side is the lab's NSD (through a cache, as a service
/// offers its answers), the local side a dnsmasq or a fault server of each test's own (never the lab's
/// hijacker; `ServeWatchHijackerOptInTests` watches that one through `hostpin serve`). The rate limits
/// run on a hand-moved clock.
@Suite struct LocalResolverWatchTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    /// The lab is all loopback: its addresses count as ordinary, so only the other reasons speak.
    private static var configuration: LocalResolverWatch.Configuration {
        var configuration = LocalResolverWatch.Configuration()
        configuration.detector = HijackDetector(ordinary: [IPAddressRange("127.0.0.0/8")!])
        return configuration
    }

    private func trusted() throws -> TrustedResolver {
        try TrustedResolver(configuration: .lab([lab.trustedDNS]))
    }

    /// Waits until the watch has finished `count` comparisons, at most 20 seconds.
    private static func waitForComparisons(_ watch: LocalResolverWatch, _ count: Int) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(20)
        while watch.statistics.compared < count, clock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(watch.statistics.compared == count, "\(watch.statistics)")
    }

    @Test func eachHijackedNameIsReportedOnceAndEveryVerdictCounted() async throws {
        // Every name under example.test is 127.0.0.66, except cdn, which it answers truthfully.
        let dnsmasq = try await DnsmasqServer(["--address=/example.test/127.0.0.66", "--address=/cdn.example.test/127.0.0.11"])
        let trusted = try trusted()
        let cache = CachingResolver(upstream: trusted)
        let clock = ManualClock()
        let reports = Mutex<[HijackReport]>([])
        let watch = LocalResolverWatch(local: try UntrustedResolver(server: dnsmasq.address), trusted: trusted,
                                       configuration: Self.configuration, clock: clock) { report in
            reports.withLock { $0.append(report) }
        }
        var decisions: [LocalResolverWatch.Decision] = []
        for _ in 0..<3 {
            for name in ["www.example.test", "cdn.example.test", "nx.example.test"] {
                decisions.append(watch.offer(try await cache.resolveDetailed(HostName.parse(name), family: .v4), family: .v4))
                clock.advance(by: .seconds(1))
            }
        }
        #expect(decisions == [.queued, .queued, .queued] + Array(repeating: .recentlyCompared, count: 6))
        try await Self.waitForComparisons(watch, 3)
        var expected = LocalResolverWatch.Statistics()
        (expected.queued, expected.recentlyCompared, expected.consistent, expected.hijacked, expected.hijackedNames) = (3, 6, 1, 2, 2)
        #expect(watch.statistics == expected)
        // The same verdicts at a scrape: hostpin_hijack_verdicts_total.
        let exposition = ServiceMetrics(resolver: trusted, cache: cache.cache, watch: watch).exposition()
        #expect(exposition.split(separator: "\n").filter { $0.contains("hostpin_hijack_verdicts_total") } == [
            "# HELP hostpin_hijack_verdicts_total Comparisons of the trusted answers given with the local resolver's, by verdict.",
            "# TYPE hostpin_hijack_verdicts_total counter",
            #"hostpin_hijack_verdicts_total{verdict="consistent"} 1"#,
            #"hostpin_hijack_verdicts_total{verdict="hijacked"} 2"#,
            #"hostpin_hijack_verdicts_total{verdict="inconclusive"} 0"#,
        ])
        let reported = reports.withLock { $0 }
        #expect(reported.map(\.name.text) == ["www.example.test", "nx.example.test"])
        #expect(reported.map { $0.reasons.map(\.code) } == [[.wildcard], [.nxdomainRewrite, .wildcard]])
        #expect(reported.first?.local.map(\.description) == ["127.0.0.66"])
        #expect(reported.first?.description.hasPrefix("www.example.test (A): local 127.0.0.66, trusted 127.0.0.10: wildcard: "
                                                      + "the local resolver answers hostpin-") == true)
        #expect(reported.last?.description.hasPrefix("nx.example.test (A): local 127.0.0.66, trusted NXDOMAIN: nxdomain-rewrite: ") == true)

        // An hour later www is compared again, and hijacked again: counted, not reported again.
        clock.advance(by: .seconds(3600))
        #expect(watch.offer(try await cache.resolveDetailed(HostName.parse("www.example.test"), family: .v4), family: .v4) == .queued)
        try await Self.waitForComparisons(watch, 4)
        #expect(watch.statistics.hijacked == 3)
        #expect(watch.statistics.hijackedNames == 2)
        #expect(reports.withLock { $0.count } == 2)
        await watch.stop()
    }

    /// A local resolver that rewrites a signed answer but keeps its RRSIG (fault-dns forge-a): the watch's
    /// signature probe makes it bad-signature, hijacked and reported — without it, 127.0.0.66 on loopback
    /// (ordinary here) would only be disjoint.
    @Test func aRewrittenSignedAnswerIsReportedAsABadSignature() async throws {
        let forger = try await FaultServer(mode: .forgeA, upstream: lab.trustedDNS)
        defer { forger.stop() }
        let trusted = try trusted()
        let cache = CachingResolver(upstream: trusted)
        let reports = Mutex<[HijackReport]>([])
        let watch = LocalResolverWatch(local: try UntrustedResolver(server: forger.address), trusted: cache,
                                       configuration: Self.configuration, clock: ManualClock()) { report in
            reports.withLock { $0.append(report) }
        }
        let outcome = try await cache.resolveDetailed(HostName.parse("www.example.test"), family: .v4)
        #expect(watch.offer(outcome, family: .v4) == .queued)
        try await Self.waitForComparisons(watch, 1)
        #expect(watch.statistics.hijacked == 1, "\(watch.statistics)")
        let reported = reports.withLock { $0 }
        #expect(reported.map { $0.reasons.map(\.code) } == [[.badSignature]])
        await watch.stop()
    }

    @Test func theLocalResolverIsAskedAtMostOncePerNamePerIntervalAndOncePerSecondOverall() async throws {
        // The local side relays to the trusted NSD (every verdict consistent) and logs what it is asked.
        let local = try await FaultServer(upstream: lab.trustedDNS)
        let clock = ManualClock()
        let watch = LocalResolverWatch(local: try UntrustedResolver(server: local.address), trusted: try trusted(),
                                       configuration: Self.configuration, clock: clock) { _ in }
        let names = try (0..<20).map { try HostName.parse("n\($0).example.test") }
        func offerAll() -> [LocalResolverWatch.Decision] {
            names.map { watch.offer($0, family: .v4, trusted: .nxdomain) }
        }
        #expect(offerAll() == [.queued] + Array(repeating: .rateLimited, count: 19))
        clock.advance(by: .milliseconds(999))
        #expect(offerAll() == [.recentlyCompared] + Array(repeating: .rateLimited, count: 19))
        clock.advance(by: .milliseconds(1))
        #expect(offerAll() == [.recentlyCompared, .queued] + Array(repeating: .rateLimited, count: 18))
        try await Self.waitForComparisons(watch, 2)
        #expect(local.queries.map(\.description) == ["udp A n0.example.test answer", "udp A n1.example.test answer"])
        #expect(watch.statistics.consistent == 2)
        #expect(watch.statistics.rateLimited == 19 + 19 + 18)
        #expect(watch.statistics.recentlyCompared == 2)
        await watch.stop()
    }

    @Test func offersNeverWaitAndAFullQueueDropsAndCounts() async throws {
        let silent = try await FaultServer(mode: .drop, upstream: nil)
        var configuration = Self.configuration
        (configuration.nameInterval, configuration.overallInterval, configuration.queueCapacity) = (.zero, .zero, 4)
        let watch = LocalResolverWatch(local: try UntrustedResolver(server: silent.address, timeout: .seconds(30), tries: 1),
                                       trusted: try trusted(), configuration: configuration) { _ in }
        let names = try (0..<20).map { try HostName.parse("n\($0).example.test") }
        let decisions = names.map { watch.offer($0, family: .v4, trusted: .nxdomain) }
        // Every offer returned while the local resolver, which never answers, held the first comparison:
        // four queued behind it (five, when the worker had not yet taken one), the rest dropped.
        #expect(watch.statistics.compared == 0)
        let queued = decisions.count { $0 == .queued }
        #expect(queued == 4 || queued == 5, "\(decisions)")
        #expect(decisions.count { $0 == .queueFull } == 20 - queued)
        #expect(watch.statistics.dropped == 20 - queued)
        // Stopping abandons the comparison in flight (the local query has 30 s left) and drops the queue.
        await watch.stop()
        #expect(watch.statistics.compared == 0)
        #expect(watch.offer(names[0], family: .v4, trusted: .nxdomain) == .notCompared)
    }

    @Test func onlyTheTrustedUpstreamsAnswersAreCompared() async throws {
        let watch = LocalResolverWatch(local: try UntrustedResolver(server: lab.trustedDNS), trusted: try trusted(),
                                       configuration: Self.configuration) { _ in }
        let name = try HostName.parse("www.example.test")
        let address = try #require(IPAddress("127.0.0.10"))
        for source in [Resolution.Source.untrusted, .stale, .pinned] {
            let resolution = Resolution(name: name, addresses: [ResolvedAddress(address: address, ttl: 60)], cnames: [],
                                        upstream: nil, source: source, receivedAt: .now)
            #expect(watch.offer(ResolutionOutcome(answer: .addresses(resolution), ttlLeft: 60, age: 0), family: .v4) == .notCompared)
        }
        #expect(watch.statistics.notCompared == 3)
        #expect(watch.statistics.queued == 0)
        await watch.stop()
    }
}
