import Foundation
import HostPin
import Testing

@Suite struct ResolutionCacheTests {
    let clock = ManualClock()

    func resolution(_ name: String, ttl: UInt32, cnameTTL: UInt32? = nil) throws -> Resolution {
        let address = try #require(IPAddress("127.0.0.10"))
        return Resolution(name: try HostName.parse(name), addresses: [ResolvedAddress(address: address, ttl: ttl)],
                          cnames: cnameTTL.map { [CNAMERecord(alias: name, target: "www.example.test", ttl: $0)] } ?? [],
                          upstream: Upstream("127.0.0.1:53"), source: .upstream, receivedAt: Date())
    }

    @Test func entryIsServedUntilItsTTLThenExpires() throws {
        let cache = ResolutionCache(clock: clock)
        let answer = try resolution("www.example.test", ttl: 30)
        cache.store(answer, family: .any)
        clock.advance(by: .seconds(29))
        let hit = try #require(cache.lookup(answer.name, family: .any))
        #expect(hit.source == .cache)
        #expect(hit.ttl == 30)
        #expect(hit.receivedAt == answer.receivedAt)
        #expect(hit.addresses == answer.addresses)
        clock.advance(by: .seconds(1))
        #expect(cache.lookup(answer.name, family: .any) == nil)
        #expect(cache.count == 0)
    }

    @Test func lifetimeIsTheChainMinimum() throws {
        let cache = ResolutionCache(clock: clock)
        let answer = try resolution("alias.example.test", ttl: 3600, cnameTTL: 5)
        cache.store(answer, family: .any)
        clock.advance(by: .milliseconds(4_900))
        #expect(cache.lookup(answer.name, family: .any) != nil)
        clock.advance(by: .milliseconds(100))
        #expect(cache.lookup(answer.name, family: .any) == nil)
    }

    @Test func zeroTTLIsNeverCachedWhateverTheClamps() throws {
        let cache = ResolutionCache(limits: .init(minimumTTL: 60, maximumTTL: 86_400), clock: clock)
        let answer = try resolution("zero.example.test", ttl: 0)
        cache.store(answer, family: .any)
        #expect(cache.lookup(answer.name, family: .any) == nil)
        #expect(cache.count == 0)
    }

    @Test func clampsRaiseShortAndCutLongTTLs() throws {
        let cache = ResolutionCache(limits: .init(minimumTTL: 10, maximumTTL: 100), clock: clock)
        let short = try resolution("short.example.test", ttl: 1)
        let long = try resolution("www.example.test", ttl: 3600)
        cache.store(short, family: .v4)
        cache.store(long, family: .v4)
        clock.advance(by: .seconds(9))
        #expect(cache.lookup(short.name, family: .v4) != nil)
        clock.advance(by: .seconds(1))
        #expect(cache.lookup(short.name, family: .v4) == nil)
        clock.advance(by: .seconds(89))
        #expect(cache.lookup(long.name, family: .v4) != nil)
        clock.advance(by: .seconds(1))
        #expect(cache.lookup(long.name, family: .v4) == nil)
    }

    @Test func familiesAreSeparateEntries() throws {
        let cache = ResolutionCache(clock: clock)
        let answer = try resolution("www.example.test", ttl: 60)
        cache.store(answer, family: .v4)
        #expect(cache.lookup(answer.name, family: .v4) != nil)
        #expect(cache.lookup(answer.name, family: .v6) == nil)
        #expect(cache.lookup(answer.name, family: .any) == nil)
    }
}
