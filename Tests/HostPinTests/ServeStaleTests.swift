import Foundation
@testable import HostPin
import HostPinTestSupport
import Testing

/// Serve-stale (RFC 8767): expired answers stand in when no upstream answers, never past the maximum
/// stale age and never over an NXDOMAIN given since. Each test has upstreams of its own to stop or break.
@Suite struct ServeStaleTests {
    let lab: Lab

    init() throws {
        lab = try Lab.current()
    }

    @Test func staleAnswerIsServedWhenEveryUpstreamIsStoppedUntilTheMaximumStaleAge() async throws {
        let server = try await AuthoritativeServer()
        let clock = ManualClock()
        let resolver = try CacheTestSupport.resolver(server.address, clock: clock, policy: .init(maximumStale: 7200))
        let name = try HostName.parse("www.example.test")
        let fresh = try await resolver.resolve(name, family: .v4)
        #expect(fresh.source == .upstream)
        await server.stop()

        clock.advance(by: .seconds(3600))  // expired: www's TTL is 3600
        let stale = try await resolver.resolveDetailed(name, family: .v4)
        let resolution = try #require(stale.resolution)
        #expect(resolution.source == .stale)
        #expect(resolution.ipAddresses.map(\.description) == ["127.0.0.10"])
        #expect(resolution.addresses.map(\.ttl) == [30])
        #expect(resolution.ttl == 30)
        #expect(resolution.receivedAt == fresh.receivedAt)
        #expect(stale.ttlLeft == 30)
        #expect(resolver.cache.statistics.staleServed == 1)

        clock.advance(by: .seconds(7199))  // 1 s short of the maximum stale age
        #expect(try await resolver.resolve(name, family: .v4).source == .stale)
        clock.advance(by: .seconds(1))
        let error = await CacheTestSupport.error { () throws(ResolutionError) in try await resolver.resolve(name, family: .v4) }
        guard case .upstreamsFailed(let failures) = error else {
            Issue.record("expected every upstream to have failed, got \(String(describing: error))")
            return
        }
        #expect(failures.map(\.upstream) == [server.address])
        #expect(resolver.cache.count == 0)
    }

    @Test func withoutServeStaleTheFailureIsThrown() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        let clock = ManualClock()
        let resolver = try CacheTestSupport.resolver(server.address, clock: clock, policy: .init(maximumStale: 0))
        _ = try await resolver.resolve("www.example.test", family: .v4)
        try server.setMode(.servfail)
        clock.advance(by: .seconds(3600))
        let error = await CacheTestSupport.error { () throws(ResolutionError) in
            try await resolver.resolve("www.example.test", family: .v4)
        }
        #expect(error == .upstreamsFailed([UpstreamFailure(upstream: server.address, reason: .servfail)]))
    }

    /// Split DNS: a route with `serveStale` off gets the failure where the default list's names are
    /// served stale, under the same cache policy.
    @Test func aRouteWithoutServeStaleGetsTheFailure() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        let routed = try await FaultServer(upstream: lab.trustedDNS)
        let clock = ManualClock()
        var configuration = TrustedResolver.Configuration.ownServer([server.address])
        configuration.timeout = .milliseconds(300)
        configuration.tries = 1
        configuration.budget = .seconds(2)
        var route = Route(domains: [try HostName.parse("cdn.example.test")], upstreams: [routed.address])
        route.serveStale = false
        configuration.routes = try RouteTable([route])
        let resolver = CachingResolver(upstream: try TrustedResolver(configuration: configuration),
                                       cache: ResolutionCache(policy: .init(maximumStale: 7200), clock: clock))
        _ = try await resolver.resolve("www.example.test", family: .v4)
        _ = try await resolver.resolve("cdn.example.test", family: .v4)
        try server.setMode(.servfail)
        try routed.setMode(.servfail)
        clock.advance(by: .seconds(3600))
        #expect(try await resolver.resolve("www.example.test", family: .v4).source == .stale)
        let error = await CacheTestSupport.error { () throws(ResolutionError) in
            try await resolver.resolve("cdn.example.test", family: .v4)
        }
        #expect(error == .upstreamsFailed([UpstreamFailure(upstream: routed.address, reason: .servfail)]))
    }

    @Test func nameServedStaleIsAnsweredAtOnceAndRefreshedOncePerRetryInterval() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        let clock = ManualClock()
        // The budget runs out: the upstream drops every query.
        let resolver = try CacheTestSupport.resolver(server.address, clock: clock, budget: .seconds(1))
        let name = try HostName.parse("cdn.example.test")
        _ = try await resolver.resolve(name, family: .v4)
        try server.setMode(.drop)
        clock.advance(by: .seconds(3600))
        #expect(try await resolver.resolve(name, family: .v4).source == .stale)
        let asked = CacheTestSupport.queries(server, for: name.text)
        #expect(asked >= 2)

        // Within the retry interval: answered stale without asking the upstream, however often.
        for _ in 0..<20 { #expect(try await resolver.resolve(name, family: .v4).source == .stale) }
        #expect(resolver.flightsInProgress == 0)
        #expect(CacheTestSupport.queries(server, for: name.text) == asked)

        // The retry interval (30 s) has passed: the caller still gets the stale answer at once, and one
        // refresh runs in the background; the upstream answers it.
        try server.setMode(.answer)
        clock.advance(by: .seconds(30))
        let during = try await withThrowingTaskGroup(of: Resolution.Source.self) { group in
            for _ in 0..<50 { group.addTask { try await resolver.resolve(name, family: .v4).source } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(during.filter { $0 == .stale }.count >= 1)
        try await CacheTestSupport.waitForFlights(resolver)
        #expect(CacheTestSupport.queries(server, for: name.text) == asked + 1)
        #expect(resolver.cache.statistics.refreshes == 1)
        let after = try await resolver.resolve(name, family: .v4)
        #expect(after.source == .cache)
        #expect(after.ttl == 3600)
    }

    @Test func staleAnswerComesAfterTheClientResponseTimerNotTheBudgetWhileTheQueryGoesOn() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        let clock = ManualClock()
        // The upstream drops every query, so only the budget (20 s) would end the resolution.
        let resolver = try CacheTestSupport.resolver(server.address, clock: clock,
                                                     policy: .init(staleAnswerTimeout: .milliseconds(300)),
                                                     timeout: .seconds(20), budget: .seconds(20))
        let name = try HostName.parse("www.example.test")
        let fresh = try await resolver.resolve(name, family: .v4)
        try server.setMode(.drop)
        clock.advance(by: .seconds(3600))

        let started = ContinuousClock.now
        let stale = try await resolver.resolveDetailed(name, family: .v4)
        #expect(ContinuousClock.now - started < .seconds(10), "the stale answer waited for the budget")
        let resolution = try #require(stale.resolution)
        #expect(resolution.source == .stale)
        #expect(resolution.ipAddresses.map(\.description) == ["127.0.0.10"])
        #expect(resolution.ttl == 30)
        #expect(resolution.receivedAt == fresh.receivedAt)
        // The resolution goes on; a second caller waits for it no longer than the first, and joins it
        // rather than asking again (single-flight).
        #expect(resolver.flightsInProgress == 1)
        #expect(try await resolver.resolve(name, family: .v4).source == .stale)
        #expect(resolver.flightsInProgress == 1)
        let deadline = ContinuousClock.now + .seconds(5)  // the fault server logs each query as it arrives
        while CacheTestSupport.queries(server, for: name.text) < 2, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(CacheTestSupport.queries(server, for: name.text) == 2)
        #expect(resolver.cache.statistics.staleServed == 2)
    }

    @Test func answerArrivingAfterTheStaleOneUpdatesTheCache() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        let clock = ManualClock()
        let resolver = try CacheTestSupport.resolver(server.address, clock: clock,
                                                     policy: .init(staleAnswerTimeout: .milliseconds(300)),
                                                     timeout: .seconds(20), budget: .seconds(20))
        let name = try HostName.parse("www.example.test")
        let fresh = try await resolver.resolve(name, family: .v4)
        // The upstream answers, but only after 5 s: long after the timer.
        try server.setMode(.delay(.seconds(5)))
        clock.advance(by: .seconds(3600))
        #expect(try await resolver.resolve(name, family: .v4).source == .stale)

        try await CacheTestSupport.waitForFlights(resolver)
        let updated = try await resolver.resolveDetailed(name, family: .v4)
        let resolution = try #require(updated.resolution)
        #expect(resolution.source == .cache)
        #expect(resolution.ttl == 3600)
        #expect(resolution.receivedAt > fresh.receivedAt)
        #expect(updated.ttlLeft == 3600)
        #expect(CacheTestSupport.queries(server, for: name.text) == 2)
        #expect(resolver.cache.statistics.staleServed == 1)
    }

    @Test func zeroStaleAnswerTimeoutAnswersStaleAtOnceAndRefreshesBehind() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        let clock = ManualClock()
        let resolver = try CacheTestSupport.resolver(server.address, clock: clock, policy: .init(staleAnswerTimeout: .zero))
        let name = try HostName.parse("cdn.example.test")
        _ = try await resolver.resolve(name, family: .v4)
        clock.advance(by: .seconds(3600))
        // The upstream answers at once, yet the caller does not wait for it.
        #expect(try await resolver.resolve(name, family: .v4).source == .stale)
        try await CacheTestSupport.waitForFlights(resolver)
        #expect(try await resolver.resolve(name, family: .v4).source == .cache)
        #expect(CacheTestSupport.queries(server, for: name.text) == 2)
    }

    @Test func upstreamAnsweringWithinTheTimerGivesTheFreshAnswer() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        let clock = ManualClock()
        let resolver = try CacheTestSupport.resolver(server.address, clock: clock,
                                                     policy: .init(staleAnswerTimeout: .seconds(60)))
        let name = try HostName.parse("www.example.test")
        _ = try await resolver.resolve(name, family: .v4)
        clock.advance(by: .seconds(3600))
        let answer = try await resolver.resolve(name, family: .v4)
        #expect(answer.source == .upstream)
        #expect(answer.ttl == 3600)
        #expect(resolver.cache.statistics.staleServed == 0)
    }

    @Test func staleNeverHidesANXDOMAINGivenSince() async throws {
        let labZone = try String(contentsOf: Lab.repositoryRoot.appendingPathComponent("zones/example.test.zone"),
                                 encoding: .utf8)
        let server = try await AuthoritativeServer(zone: labZone + "\ngone 60 IN A 127.0.0.30\n")
        let clock = ManualClock()
        let resolver = try CacheTestSupport.resolver(server.address, clock: clock)
        let name = try HostName.parse("gone.example.test")
        #expect(try await resolver.resolve(name, family: .v4).ipAddresses.map(\.description) == ["127.0.0.30"])
        #expect(try await resolver.resolve(name, family: .any).ipAddresses.map(\.description) == ["127.0.0.30"])

        try await server.serve(zone: labZone)
        clock.advance(by: .seconds(60))
        let error = await CacheTestSupport.error { () throws(ResolutionError) in try await resolver.resolve(name, family: .v4) }
        #expect(error == .nxdomain(name))

        // The upstream stops; once the NXDOMAIN has expired, no older address comes back stale, for the
        // family asked or the other one.
        await server.stop()
        clock.advance(by: .seconds(60))
        for family in [AddressFamily.v4, .any] {
            let failure = await CacheTestSupport.error { () throws(ResolutionError) in
                try await resolver.resolve(name, family: family)
            }
            guard case .upstreamsFailed = failure else {
                Issue.record("\(family): expected every upstream to have failed, got \(String(describing: failure))")
                continue
            }
        }
        #expect(resolver.cache.statistics.staleServed == 0)
    }

    @Test func staleTrustedAnswerIsPreferredToTheUntrustedFallback() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        let clock = ManualClock()
        // The second trusted NSD stands in for an untrusted resolver (only suites named HijackerOptIn may ask
        // the lab's hijacker): its answers come back marked untrusted all the same.
        let resolver = try CacheTestSupport.resolver(server.address, clock: clock, untrustedFallback: lab.trustedDNS2)
        _ = try await resolver.resolve("www.example.test", family: .v4)
        try server.setMode(.servfail)
        clock.advance(by: .seconds(3600))
        let answer = try await resolver.resolve("www.example.test", family: .v4)
        #expect(answer.source == .stale)
        #expect(answer.ipAddresses.map(\.description) == ["127.0.0.10"])
        // A name never cached still gets the fallback's answer, marked untrusted.
        let other = try await resolver.resolve("cdn.example.test", family: .v4)
        #expect(other.source == .untrusted)
        #expect(other.ipAddresses.map(\.description) == ["127.0.0.11"])
    }

    @Test func untrustedNXDOMAINNeitherHidesNorRemovesATrustedAnswer() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        let liar = try await FaultServer(mode: .nxdomain, upstream: nil)
        let clock = ManualClock()
        let resolver = try CacheTestSupport.resolver(server.address, clock: clock, untrustedFallback: liar.address)
        _ = try await resolver.resolve("www.example.test", family: .v4)
        try server.setMode(.servfail)
        clock.advance(by: .seconds(3600))
        for _ in 0..<2 {
            let answer = try await resolver.resolve("www.example.test", family: .v4)
            #expect(answer.source == .stale)
            #expect(answer.ipAddresses.map(\.description) == ["127.0.0.10"])
        }
        #expect(liar.queries.count == 1)  // asked once; the name is then served stale at once
    }
}
