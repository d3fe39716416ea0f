import Foundation
@testable import HostPin
import Testing

/// The cache's own rules for negative answers, entries kept to be served stale, flushing and counting,
/// with a hand-moved clock and no network.
@Suite struct ResolutionCachePolicyTests {
    let clock = ManualClock()
    let name: HostName
    let upstream = Upstream("127.0.0.1:53")

    init() throws {
        name = try HostName.parse("www.example.test")
    }

    func addresses(ttl: UInt32 = 60, source: Resolution.Source = .upstream) throws -> Resolution {
        Resolution(name: name, addresses: [ResolvedAddress(address: try #require(IPAddress("127.0.0.10")), ttl: ttl)],
                   cnames: [], upstream: upstream, source: source, receivedAt: Date())
    }

    func negative(_ kind: NegativeAnswer.Kind, family: AddressFamily = .v4, soaTTL: UInt32 = 3600, minimum: UInt32 = 60,
                  hasSOA: Bool = true, source: Resolution.Source = .upstream) -> NegativeAnswer {
        NegativeAnswer(name: name, family: family, kind: kind, cnames: [],
                       soa: hasSOA ? SOARecord(zone: "example.test", ttl: soaTTL, minimum: minimum) : nil,
                       upstream: upstream, source: source, receivedAt: Date())
    }

    @Test(arguments: [(UInt32(3600), UInt32(60), UInt32(60)), (30, 60, 30), (3600, 7200, 900)])
    func negativeAnswerLivesForTheSmallerOfSOATTLAndMinimumCapped(soaTTL: UInt32, minimum: UInt32, lifetime: UInt32) throws {
        let cache = ResolutionCache(clock: clock)
        cache.store(negative(.nxdomain, soaTTL: soaTTL, minimum: minimum))
        let stored = try #require(cache.lookupDetailed(name, family: .v4))
        #expect(stored.ttlLeft == lifetime)
        #expect(stored.source == .negativeCache)
        #expect(cache.lookup(name, family: .v4) == nil)  // not addresses
        clock.advance(by: .seconds(Int64(lifetime) - 1))
        #expect(cache.lookupDetailed(name, family: .v4)?.ttlLeft == 1)
        clock.advance(by: .seconds(1))
        #expect(cache.lookupDetailed(name, family: .v4) == nil)
        #expect(cache.count == 0)  // negative entries are never kept to be served stale
    }

    @Test func negativeAnswersThatMayNotBeCachedAreNot() {
        let cache = ResolutionCache(clock: clock)
        cache.store(negative(.nxdomain, hasSOA: false))
        cache.store(negative(.nodata, family: .v6, source: .untrusted))
        cache.store(negative(.nodata, family: .any, minimum: 0))
        #expect(cache.count == 0)
        let capped = ResolutionCache(limits: .init(maximumNegativeTTL: 0), clock: clock)
        capped.store(negative(.nxdomain))
        #expect(capped.count == 0)
    }

    @Test func nxdomainReplacesTheAddressesOfEveryFamilyAndNodataOnlyItsOwn() throws {
        let cache = ResolutionCache(clock: clock)
        for family in AddressFamily.allCases { cache.store(try addresses(), family: family) }
        cache.store(negative(.nodata, family: .v6))
        #expect(cache.lookup(name, family: .v6) == nil)
        #expect(cache.lookup(name, family: .v4) != nil)
        #expect(cache.lookup(name, family: .any) != nil)
        cache.store(negative(.nxdomain, family: .v4, hasSOA: false))  // not cached, still authoritative
        #expect(cache.count == 0)  // the name does not exist: nothing of it stays, the NODATA for v6 included
    }

    @Test func negativeAnswerFromTheUntrustedFallbackRemovesNothing() throws {
        let cache = ResolutionCache(clock: clock)
        for family in AddressFamily.allCases { cache.store(try addresses(), family: family) }
        cache.store(negative(.nxdomain, family: .v4, source: .untrusted))
        cache.store(negative(.nodata, family: .v6, source: .literal))
        for family in AddressFamily.allCases { #expect(cache.lookup(name, family: family) != nil, "\(family)") }
    }

    @Test func expiredEntryIsKeptForTheMaximumStaleAgeThenRemoved() throws {
        let cache = ResolutionCache(policy: .init(maximumStale: 100), clock: clock)
        cache.store(try addresses(ttl: 60), family: .any)
        clock.advance(by: .seconds(60))
        #expect(cache.lookup(name, family: .any) == nil)
        #expect(cache.lookupDetailed(name, family: .any) == nil)
        #expect(cache.count == 1)
        guard case .expired = cache.find(name, family: .any, now: clock.nanoseconds()) else {
            Issue.record("the expired entry is not kept")
            return
        }
        clock.advance(by: .seconds(99))
        guard case .expired = cache.find(name, family: .any, now: clock.nanoseconds()) else {
            Issue.record("the expired entry went before the maximum stale age")
            return
        }
        clock.advance(by: .seconds(1))
        guard case .removed = cache.find(name, family: .any, now: clock.nanoseconds()) else {
            Issue.record("the entry outlived the maximum stale age")
            return
        }
        #expect(cache.count == 0)
    }

    @Test func staleAndOtherUntrustedSourcesAreNeverStored() throws {
        let cache = ResolutionCache(clock: clock)
        for source in [Resolution.Source.stale, .untrusted, .pinned, .literal, .negativeCache] {
            cache.store(try addresses(source: source), family: .v4)
        }
        #expect(cache.count == 0)
    }

    @Test func detailedLookupCountsTheTimeLeftAndTheAgeOnTheMonotonicClock() throws {
        let cache = ResolutionCache(clock: clock)
        let answer = try addresses(ttl: 60)
        cache.store(answer, family: .v4)
        clock.advance(by: .milliseconds(20_500))
        let found = try #require(cache.lookupDetailed(name, family: .v4))
        #expect(found.answer == .addresses(answer.cachedCopy))
        #expect(found.ttlLeft == 39)
        #expect(found.age == 20)
    }

    @Test func statisticsCountHitsMissesAndEntries() throws {
        let cache = ResolutionCache(clock: clock)
        let other = try HostName.parse("cdn.example.test")
        #expect(cache.lookup(name, family: .v4) == nil)
        cache.store(try addresses(), family: .v4)
        cache.store(negative(.nodata, family: .v6))
        #expect(cache.lookup(name, family: .v4) != nil)
        #expect(cache.lookup(name, family: .v4) != nil)
        #expect(cache.lookupDetailed(name, family: .v6) != nil)
        #expect(cache.lookup(other, family: .v4) == nil)
        cache.removeAll()
        #expect(cache.statistics == ResolutionCache.Statistics(entries: 0, hits: 2, negativeHits: 1, misses: 2))
    }

    @Test func removingANameRemovesEveryFamilyAndNoOtherName() throws {
        let cache = ResolutionCache(clock: clock)
        let other = try HostName.parse("cdn.example.test")
        for family in [AddressFamily.v4, .any] { cache.store(try addresses(), family: family) }
        cache.store(negative(.nodata, family: .v6))
        cache.store(Resolution(name: other, addresses: try addresses().addresses, cnames: [], upstream: upstream,
                               source: .upstream, receivedAt: Date()), family: .v4)
        cache.remove(name)
        #expect(cache.count == 1)
        #expect(cache.lookup(other, family: .v4) != nil)
        for family in AddressFamily.allCases { #expect(cache.lookupDetailed(name, family: family) == nil) }
    }
}
