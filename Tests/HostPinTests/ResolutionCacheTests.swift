import Foundation
@testable import HostPin
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
        // Without serve-stale, an expired entry is dropped at its next lookup.
        let cache = ResolutionCache(policy: .init(maximumStale: 0), clock: clock)
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

    /// `count` names that fall in one shard, where eviction order is exact LRU.
    func namesInOneShard(_ count: Int) throws -> [String] {
        var byShard: [Int: [String]] = [:]
        for i in 0... {
            let text = "n\(i).example.test"
            let shard = ResolutionCache.shardIndex(for: try HostName.parse(text))
            byShard[shard, default: []].append(text)
            if byShard[shard]?.count == count { return byShard[shard] ?? [] }
        }
        return []
    }

    func isCached(_ cache: ResolutionCache, _ name: String, family: AddressFamily = .any) throws -> Bool {
        cache.lookup(try HostName.parse(name), family: family) != nil
    }

    @Test func entryLimitHoldsHoweverManyNamesAreStored() throws {
        let cache = ResolutionCache(limits: .init(maximumEntries: 100), clock: clock)
        for i in 0..<10_000 {
            cache.store(try resolution("n\(i).example.test", ttl: 3600), family: .any)
            #expect(cache.count == min(i + 1, 100))
        }
        #expect(try isCached(cache, "n9999.example.test"))
    }

    @Test func leastRecentlyUsedEntryGoesFirst() throws {
        let cache = ResolutionCache(limits: .init(maximumEntries: 3), clock: clock)
        let names = try namesInOneShard(4)
        for name in names.prefix(3) { cache.store(try resolution(name, ttl: 3600), family: .any) }
        #expect(try isCached(cache, names[0]))  // now the most recently used: names[1] is the least
        cache.store(try resolution(names[3], ttl: 3600), family: .any)
        #expect(cache.count == 3)
        #expect(try !isCached(cache, names[1]))
        #expect(try isCached(cache, names[0]))
        #expect(try isCached(cache, names[2]))
        #expect(try isCached(cache, names[3]))
    }

    @Test func expiredEntriesGoBeforeTheLeastRecentlyUsed() throws {
        let cache = ResolutionCache(limits: .init(maximumEntries: 4), clock: clock)
        let names = try namesInOneShard(6)
        cache.store(try resolution(names[0], ttl: 3600), family: .any)  // the least recently used
        cache.store(try resolution(names[1], ttl: 5), family: .any)
        cache.store(try resolution(names[2], ttl: 5), family: .any)
        cache.store(try resolution(names[3], ttl: 3600), family: .any)
        clock.advance(by: .seconds(10))
        cache.store(try resolution(names[4], ttl: 3600), family: .any)
        // Both expired entries went, not the fresh least recently used one: room for one more.
        #expect(cache.count == 3)
        cache.store(try resolution(names[5], ttl: 3600), family: .any)
        #expect(cache.count == 4)
        for name in [names[0], names[3], names[4], names[5]] { #expect(try isCached(cache, name), "\(name)") }
    }

    @Test func aFullCacheTakesRoomFromAnotherShardWhenTheNewEntrysShardIsEmpty() throws {
        let cache = ResolutionCache(limits: .init(maximumEntries: 1), clock: clock)
        let first = "www.example.test"
        let home = ResolutionCache.shardIndex(for: try HostName.parse(first))
        var other = ""
        for i in 0... where ResolutionCache.shardIndex(for: try HostName.parse("n\(i).example.test")) != home {
            other = "n\(i).example.test"
            break
        }
        cache.store(try resolution(first, ttl: 3600), family: .any)
        cache.store(try resolution(other, ttl: 3600), family: .any)
        #expect(cache.count == 1)
        #expect(try isCached(cache, other))
        #expect(try !isCached(cache, first))
    }

    @Test func replacingAnEntryKeepsTheCount() throws {
        let cache = ResolutionCache(limits: .init(maximumEntries: 2), clock: clock)
        for _ in 0..<3 { cache.store(try resolution("www.example.test", ttl: 3600), family: .any) }
        cache.store(try resolution("www.example.test", ttl: 3600), family: .v4)
        #expect(cache.count == 2)
        #expect(try isCached(cache, "www.example.test", family: .any))
        #expect(try isCached(cache, "www.example.test", family: .v4))
    }

    @Test func zeroEntryLimitCachesNothing() throws {
        let cache = ResolutionCache(limits: .init(maximumEntries: 0), clock: clock)
        cache.store(try resolution("www.example.test", ttl: 3600), family: .any)
        #expect(cache.count == 0)
        #expect(try !isCached(cache, "www.example.test"))
    }

    @Test func entryLimitHoldsUnderConcurrentStores() async throws {
        let cache = ResolutionCache(limits: .init(maximumEntries: 100), clock: clock)
        let answers = try (0..<8_000).map { try resolution("n\($0).example.test", ttl: 3600) }
        await withTaskGroup(of: Void.self) { group in
            for part in 0..<4 {
                group.addTask {
                    for answer in answers[(part * 2_000)..<((part + 1) * 2_000)] { cache.store(answer, family: .any) }
                }
            }
        }
        #expect(cache.count == 100)
    }

    /// An entry used since eviction last passed it gets a second chance; one unused goes.
    @Test func evictionSparesAnEntryUsedSinceItLastPassed() throws {
        let cache = ResolutionCache(limits: .init(maximumEntries: 3), clock: clock)
        let names = try namesInOneShard(5)
        for name in names.prefix(3) { cache.store(try resolution(name, ttl: 3600), family: .any) }
        #expect(try isCached(cache, names[0]))
        #expect(try isCached(cache, names[1]))
        cache.store(try resolution(names[3], ttl: 3600), family: .any)  // names[2], never used, goes
        #expect(try isCached(cache, names[0]))
        #expect(try isCached(cache, names[1]))
        #expect(try !isCached(cache, names[2]))
        // Every entry now used: a round clears the marks, then one of them goes, never the new one.
        #expect(try isCached(cache, names[3]))
        cache.store(try resolution(names[4], ttl: 3600), family: .any)
        #expect(cache.count == 3)
        #expect(try isCached(cache, names[4]))
        #expect(try names.prefix(4).filter { try isCached(cache, $0) }.count == 2)
    }

    /// Threads hitting names while others store and evict the same names: every hit is the answer of the
    /// name asked (an address derived from the name's number), never another name's or a torn entry.
    @Test func hitsStayConsistentWhileOthersStoreAndEvict() async throws {
        let cache = ResolutionCache(limits: .init(maximumEntries: 64))
        let count = 256
        let names = try (0..<count).map { try HostName.parse("n\($0).example.test") }
        func answer(_ index: Int, more: Bool) -> Resolution {
            let addresses = (0..<(more ? 3 : 1)).map { part in
                ResolvedAddress(address: IPAddress(family: .v4, bytes: [10, UInt8(index >> 8), UInt8(index & 255), UInt8(part)]),
                                ttl: 3600)
            }
            return Resolution(name: names[index], addresses: addresses, cnames: [], upstream: Upstream("127.0.0.1:53"),
                              source: .upstream, receivedAt: Date())
        }
        let bad = await withTaskGroup(of: Int.self) { group in
            for task in 0..<4 {
                group.addTask {
                    var bad = 0
                    var state = UInt64(task + 1) &* 0x9E37_79B9_7F4A_7C15
                    for step in 0..<20_000 {
                        state ^= state << 13; state ^= state >> 7; state ^= state << 17
                        let index = Int(state % UInt64(count))
                        if task < 2 {
                            cache.store(answer(index, more: step & 1 == 0), family: .v4)
                            if step % 1_000 == 0 { cache.remove(names[index]) }
                        } else if let hit = cache.lookup(names[index], family: .v4) {
                            let expected = answer(index, more: hit.addresses.count > 1)
                            if hit.name != names[index] || hit.addresses != expected.addresses { bad += 1 }
                        }
                    }
                    return bad
                }
            }
            return await group.reduce(0, +)
        }
        #expect(bad == 0)
        #expect(cache.count <= 64)
    }

    @Test func namesOfEveryLengthAreKeptApartAndComeBackWhole() throws {
        // An entry holds a name of up to 32 bytes inline and a longer one beside it: around that length,
        // two names differing only in one byte (for the longer ones, after their first 32) are separate
        // entries, and each comes back whole.
        let cache = ResolutionCache(clock: clock)
        var answers: [Resolution] = []
        for (index, length) in [7, 15, 16, 31, 32, 33, 38, 39, 40, 68].enumerated() {
            for (variant, last) in ["b", "c"].enumerated() {
                let name = try HostName.parse(String(repeating: "a", count: length - 6) + last + ".test")
                #expect(name.text.utf8.count == length)
                let address = IPAddress(family: .v4, bytes: [10, 0, UInt8(index), UInt8(variant)])
                answers.append(Resolution(name: name, addresses: [ResolvedAddress(address: address, ttl: 60)], cnames: [],
                                          upstream: Upstream("127.0.0.1:53"), source: .upstream, receivedAt: Date()))
            }
        }
        for answer in answers { cache.store(answer, family: .v4) }
        #expect(cache.count == answers.count)
        for answer in answers {
            let hit = try #require(cache.lookup(answer.name, family: .v4))
            #expect(hit.name == answer.name)
            #expect(hit.addresses == answer.addresses)
        }
        let saved = Set(cache.savedEntries().compactMap { saved -> String? in
            guard case .addresses(let resolution) = saved.answer else { return nil }
            return resolution.name.text
        })
        #expect(saved == Set(answers.map(\.name.text)))
        // Removing one of two names alike removes only that one.
        let long = answers[answers.count - 2]
        cache.remove(long.name)
        #expect(cache.lookup(long.name, family: .v4) == nil)
        #expect(cache.lookup(answers[answers.count - 1].name, family: .v4)?.addresses == answers[answers.count - 1].addresses)
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
