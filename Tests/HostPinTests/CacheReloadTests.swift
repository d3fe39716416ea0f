import Foundation
@testable import HostPin
import Testing

/// What a reload does to a running cache: new limits and policy (``ResolutionCache/update(limits:policy:)``)
/// and dropping the answers of upstreams no longer listed (``ResolutionCache/removeAll(answeredBy:)``).
@Suite struct CacheReloadTests {
    let clock = ManualClock()

    func resolution(_ name: String, ttl: UInt32, from upstream: String = "127.0.0.1:53") throws -> Resolution {
        let address = try #require(IPAddress("127.0.0.10"))
        return Resolution(name: try HostName.parse(name), addresses: [ResolvedAddress(address: address, ttl: ttl)], cnames: [],
                          upstream: Upstream(upstream), source: .upstream, receivedAt: Date())
    }

    @Test func newClampsApplyToAnswersStoredFromThenOn() throws {
        let cache = ResolutionCache(limits: .init(maximumTTL: 100), clock: clock)
        let before = try resolution("www.example.test", ttl: 3600)
        cache.store(before, family: .v4)
        cache.update(limits: .init(maximumTTL: 10), policy: .init(maximumStale: 0))
        #expect(cache.limits.maximumTTL == 10)
        #expect(cache.policy.maximumStale == 0)
        let after = try resolution("cdn.example.test", ttl: 3600)
        cache.store(after, family: .v4)
        clock.advance(by: .seconds(10))
        #expect(cache.lookup(after.name, family: .v4) == nil)  // the new clamp
        #expect(cache.lookup(before.name, family: .v4) != nil)  // kept the lifetime it was given
        clock.advance(by: .seconds(90))
        #expect(cache.lookup(before.name, family: .v4) == nil)
    }

    @Test func aLowerEntryLimitTrimsAtOnceExpiredFirst() throws {
        let cache = ResolutionCache(policy: .init(maximumStale: 0), clock: clock)
        for index in 0..<100 { cache.store(try resolution("n\(index).example.test", ttl: 3600), family: .v4) }
        cache.store(try resolution("short.example.test", ttl: 1), family: .v4)
        clock.advance(by: .seconds(2))
        cache.update(limits: .init(maximumEntries: 10), policy: .init())
        #expect(cache.count == 10)
        #expect(cache.statistics.entries == 10)
        #expect(cache.lookup(try HostName.parse("short.example.test"), family: .v4) == nil)
        cache.store(try resolution("new.example.test", ttl: 3600), family: .v4)
        #expect(cache.count == 10)
    }

    @Test func answersOfUpstreamsNoLongerListedGo() throws {
        let cache = ResolutionCache(clock: clock)
        cache.store(try resolution("www.example.test", ttl: 3600, from: "127.0.0.1:5300"), family: .v4)
        cache.store(try resolution("www.example.test", ttl: 3600, from: "127.0.0.2:5300"), family: .v6)
        cache.store(try resolution("cdn.example.test", ttl: 3600, from: "127.0.0.2:5300"), family: .v4)
        let negative = NegativeAnswer(name: try HostName.parse("nx.example.test"), family: .v4, kind: .nxdomain,
                                      cnames: [], soa: CacheTestSupport.zoneSOA, upstream: Upstream("127.0.0.2:5300"),
                                      source: .upstream, receivedAt: Date())
        cache.store(negative)
        let removed = cache.removeAll { $0.description == "127.0.0.2:5300" }
        #expect(removed == 3)
        #expect(cache.count == 1)
        #expect(cache.lookup(try HostName.parse("www.example.test"), family: .v4) != nil)
        #expect(cache.lookup(try HostName.parse("www.example.test"), family: .v6) == nil)
        #expect(cache.lookupDetailed(try HostName.parse("nx.example.test"), family: .v4) == nil)
    }
}
