import Foundation
@testable import HostPin
import HostPinTestSupport
import Testing

/// ``CachingResolver/cachedAddresses(_:family:)``, the hit read in place, against `resolve` over the same
/// cache: the same addresses, TTLs, CNAMEs, upstream and DNSSEC status; `nil` wherever `resolve` would not
/// answer from a fresh positive entry; the same refresh-ahead claim. Queries counted at a fault server of
/// the test's own relaying to the lab's NSD; time moved by hand.
@Suite struct CachedAddressesTests {
    let lab: Lab

    init() throws {
        lab = try Lab.current()
    }

    @Test func aHitReadInPlaceIsWhatResolveReturns() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        let clock = ManualClock()
        let resolver = try CacheTestSupport.resolver(server.address, clock: clock)
        for text in ["multi.example.test", "alias.example.test", "www.example.test"] {
            let name = try HostName.parse(text)
            #expect(resolver.cachedAddresses(name, family: .v4) == nil, "\(text) before any resolution")
            let first = try await resolver.resolve(name, family: .v4)
            let view = try #require(resolver.cachedAddresses(name, family: .v4))
            #expect(Array(view) == first.addresses)
            #expect(view.cnames == first.cnames)
            #expect(view.upstream == first.upstream && view.receivedAt == first.receivedAt && view.dnssec == first.dnssec)
            #expect(view.resolution(name: name) == (try await resolver.resolve(name, family: .v4)))
            #expect(view.age == 0 && view.ttlLeft == first.ttl)
            #expect(CacheTestSupport.queries(server, for: text) == 1, "\(text): only the first resolve asked")
        }
        let multi = try #require(resolver.cachedAddresses(try HostName.parse("multi.example.test"), family: .v4))
        #expect(multi.map(\.address.description).sorted() == ["127.0.0.10", "127.0.0.12"])
        #expect(try #require(resolver.cachedAddresses(try HostName.parse("alias.example.test"), family: .v4)).cnames.count == 1)
        clock.advance(by: .seconds(10))
        let aged = try #require(resolver.cachedAddresses(try HostName.parse("www.example.test"), family: .v4))
        #expect(aged.age == 10 && aged.ttlLeft == 3590)
    }

    @Test func whatResolveAnswersItselfOrNegativelyIsNotAHit() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        let resolver = try CacheTestSupport.resolver(server.address, clock: ManualClock())
        let missing = try HostName.parse("missing.example.test")
        _ = await CacheTestSupport.error { () async throws(ResolutionError) in try await resolver.resolve(missing, family: .v4) }
        #expect(resolver.cache.lookupDetailed(missing, family: .v4) != nil, "the NXDOMAIN is cached")
        #expect(resolver.cachedAddresses(missing, family: .v4) == nil)
        for literal in ["127.0.0.1", "::1", "localhost", "x.invalid", "1.0.0.127.in-addr.arpa"] {
            #expect(resolver.cachedAddresses(try HostName.parse(literal), family: .any) == nil, "\(literal)")
        }
        #expect(server.queries.count == 1)
    }

    @Test func aHitClaimsTheRefreshAheadOnceAsResolveDoes() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        let clock = ManualClock()
        let resolver = try CacheTestSupport.resolver(server.address, clock: clock, timeout: .seconds(10), budget: .seconds(10))
        let name = try HostName.parse("cdn.example.test")
        let first = try await resolver.resolve(name, family: .v4)
        let generation = try #require(resolver.cachedAddresses(name, family: .v4)).generation
        clock.advance(by: .seconds(2881))  // past 0.8 × 3600 s
        try server.setMode(.delay(.milliseconds(500)))
        #expect(resolver.cachedAddresses(name, family: .v4)?.receivedAt == first.receivedAt)
        #expect(resolver.flightsInProgress == 1)
        #expect(resolver.cachedAddresses(name, family: .v4) != nil)
        #expect(resolver.flightsInProgress == 1, "one refresh, claimed once")
        try await CacheTestSupport.waitForFlights(resolver)
        #expect(CacheTestSupport.queries(server, for: name.text) == 2)
        let refreshed = try #require(resolver.cachedAddresses(name, family: .v4))
        #expect(refreshed.generation != generation && refreshed.age == 0)
    }

    /// An entry stored after the cache was emptied (a flush, a network change) has a generation of its
    /// own: the stub tells a kept reply's entry by it, so one seen before must not come back.
    @Test func generationsGoOnAfterTheCacheIsEmptied() throws {
        let cache = ResolutionCache(clock: ManualClock())
        let name = try HostName.parse("www.example.test")
        func store(_ address: String) {
            cache.store(Resolution(name: name, addresses: [ResolvedAddress(address: IPAddress(address)!, ttl: 300)], cnames: [],
                                   upstream: Upstream("127.0.0.1:53"), source: .upstream, receivedAt: Date()), family: .v4)
        }
        store("127.0.0.10")
        let before = try #require(cache.cachedAddresses(name, family: .v4))
        cache.removeAll()
        #expect(cache.cachedAddresses(name, family: .v4) == nil)
        store("127.0.0.11")
        let after = try #require(cache.cachedAddresses(name, family: .v4))
        #expect(after.map(\.address.description) == ["127.0.0.11"])
        #expect(after.generation != before.generation)
    }

    /// The proxy and the interceptor ask `cachedAddresses` first and `resolve` on `nil`: each request is
    /// counted once in the cache's statistics, a miss or a negative hit by `resolve` alone.
    @Test func aLookupThenAResolutionIsCountedOnce() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        let resolver = try CacheTestSupport.resolver(server.address, clock: ManualClock())
        func request(_ text: String) async throws {
            let name = try HostName.parse(text)
            if resolver.cachedAddresses(name, family: .v4) == nil {
                _ = await CacheTestSupport.error { () async throws(ResolutionError) in try await resolver.resolve(name, family: .v4) }
            }
        }
        for text in ["www.example.test", "www.example.test", "missing.example.test", "missing.example.test", "www.example.test"] {
            try await request(text)
        }
        let statistics = resolver.cache.statistics
        #expect((statistics.hits, statistics.negativeHits, statistics.misses) == (2, 1, 2))
    }
}
