import Foundation
@testable import HostPin
import Testing

/// What a network change does to the pure state: the cache drops negative and expired answers and names
/// its most recent entries, the upstream health ends every hold-down. No server.
@Suite struct NetworkChangeCacheTests {
    let clock = ManualClock()

    func resolution(_ name: String, ttl: UInt32) throws -> Resolution {
        Resolution(name: try HostName.parse(name), addresses: [ResolvedAddress(address: try #require(IPAddress("127.0.0.10")), ttl: ttl)],
                   cnames: [], upstream: Upstream("127.0.0.1:53"), source: .upstream, receivedAt: Date())
    }

    @Test func negativeAndStaleEntriesGoFreshPositiveOnesStay() throws {
        let cache = ResolutionCache(policy: .init(maximumStale: 3600), clock: clock)
        cache.store(try resolution("short.example.test", ttl: 1), family: .v4)
        cache.store(try resolution("www.example.test", ttl: 3600), family: .v4)
        cache.store(NegativeAnswer(name: try HostName.parse("nx.example.test"), family: .v4, kind: .nxdomain, cnames: [],
                                   soa: CacheTestSupport.zoneSOA, upstream: Upstream("127.0.0.1:53"), source: .upstream,
                                   receivedAt: Date()))
        clock.advance(by: .seconds(2))  // short.example.test is now kept only to be served stale
        #expect(cache.count == 3)
        #expect(cache.removeNegativeAndStale() == 2)
        #expect(cache.count == 1)
        #expect(cache.lookup(try HostName.parse("www.example.test"), family: .v4) != nil)
        #expect(cache.lookupDetailed(try HostName.parse("nx.example.test"), family: .v4) == nil)
    }

    @Test func recentKeysAreTheMostRecentlyStoredAtMostTheLimit() throws {
        let cache = ResolutionCache(clock: clock)
        for index in 0..<50 { cache.store(try resolution("n\(index).example.test", ttl: 3600), family: .v4) }
        cache.store(try resolution("n0.example.test", ttl: 3600), family: .v6)
        let keys = cache.recentKeys(limit: 20)
        #expect(keys.count == 20)
        #expect(Set(keys.map { "\($0.name) \($0.family)" }).count == 20)
        #expect(cache.recentKeys(limit: 1_000).count == 51)
        #expect(cache.recentKeys(limit: 0).isEmpty)
        // Each shard's newest come first: the last name stored is among the first 16.
        #expect(keys.prefix(16).contains { $0.name.description == "n0.example.test" && $0.family == .v6 })
    }

    @Test func endHoldDownsMakesEveryUpstreamHealthyAndAFailureStartsFromTheFirstHoldDown() {
        let upstreams = [Upstream("127.0.0.1:5300")!, Upstream("127.0.0.1:5301")!]
        let health = UpstreamHealth(upstreams: upstreams, firstHoldDown: .seconds(1), maximumHoldDown: .seconds(30), clock: clock)
        for _ in 0..<5 { health.recordFailure(0, .acrossNames) }
        #expect(health.status(at: 0) == .heldDown(failures: 5, remaining: .seconds(16)))
        health.endHoldDowns()
        #expect(health.status(at: 0) == .healthy)
        #expect(health.plan().order == [0, 1])
        health.recordFailure(0, .acrossNames)
        #expect(health.status(at: 0) == .heldDown(failures: 1, remaining: .seconds(1)))
    }
}
