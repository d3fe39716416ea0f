import HostPin
import Testing

@Suite struct DNSSECKeyCacheTests {
    private let zone = WireName("example.test")!

    @Test func secureSetIsKeptForItsTTLAndBadKeysForSixtySeconds() throws {
        var cache = KeyCache()
        let bad = BogusReason(rrset: "bad.test. DNSKEY", problem: .noKeyMatchesDS)
        let badZone = try #require(WireName("bad.test"))
        cache.store([zone: .secure(keys: [], ttl: 300), badZone: .bogus(bad)], at: 1000)
        #expect(cache.keys(at: 1059).count == 2)
        #expect(cache.keys(at: 1060) == [zone: .secure(keys: [], ttl: 300)])
        #expect(cache.keys(at: 1300).isEmpty)
    }

    @Test func capacityDropsTheOldestEntry() throws {
        var cache = KeyCache(capacity: 2)
        let names = try ["a.test", "b.test", "c.test"].map { try #require(WireName($0)) }
        for (index, name) in names.enumerated() { cache.store([name: .secure(keys: [], ttl: 300)], at: Int64(index)) }
        #expect(cache.count == 2)
        #expect(Set(cache.keys(at: 3).keys) == Set(names.suffix(2)))
    }

    @Test func cachedKeysSpareTheChainQueries() throws {
        let (lab, anchors) = try LabZones.current()
        let name = try #require(WireName("www.example.test"))
        let (answer, _) = lab.positiveAnswer(name, type: DNSSECRecord.Kind.a)
        var cache = KeyCache()
        var first = AnswerValidation(name: name, type: DNSSECRecord.Kind.a, answer: answer, anchors: anchors, now: nowSeconds())
        _ = lab.run(&first)
        cache.store(first.validatedKeys, at: 0)
        var second = AnswerValidation(name: name, type: DNSSECRecord.Kind.a, answer: answer, anchors: anchors,
                                      knownKeys: cache.keys(at: 1), now: nowSeconds())
        let (verdict, requests) = lab.run(&second)
        #expect(verdict == .secure(SecureTTLs(records: [DNSSECRecord.Kind.a: 3600])))
        #expect(requests.isEmpty)
        #expect(second.checksSpent == 1)
    }
}
