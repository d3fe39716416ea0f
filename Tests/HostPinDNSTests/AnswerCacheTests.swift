import HostPin
import HostPinTestSupport
@testable import HostPinDNS
import Testing

/// The stub's cache of the responses ldns wrote (``AnswerCache``): a query asked again gets exactly
/// what ldns would write for it, until the trusted cache's answer changes.
@Suite struct AnswerCacheTests {
    /// A responder on the lab's NSD whose trusted cache runs on `clock`.
    private static func responder(clock: TestClock) throws -> DNSResponder {
        let trusted = try TrustedResolver(configuration: .lab([Lab.current().trustedDNS]))
        return DNSResponder(resolver: CachingResolver(upstream: trusted, cache: ResolutionCache(clock: clock)))
    }

    private static func ask(_ responder: DNSResponder, _ query: [UInt8], over transport: DNSTransport = .udp) async throws -> [UInt8] {
        try #require(await responder.respond(to: query, over: transport))
    }

    @Test func aRepeatedQueryIsAnsweredAsLDNSWritesItWithItsIDCaseAndCountedDownTTLs() async throws {
        let clock = TestClock()
        let responder = try Self.responder(clock: clock)
        // An address through a CNAME chain, NXDOMAIN and NODATA with the zone's SOA, AAAA; with and
        // without EDNS.
        let asked: [(String, UInt16, UInt16?)] = [("chain.example.test", 1, 1232), ("nx.example.test", 1, 1232),
                                                   ("v6only.example.test", 1, nil), ("dual.example.test", 28, 1232)]
        for (name, type, udpSize) in asked {
            _ = try await Self.ask(responder, TestMessage.query(name, type: type, udpSize: udpSize))  // a miss
            _ = try await Self.ask(responder, TestMessage.query(name, type: type, udpSize: udpSize))  // a hit: kept
        }
        #expect(responder.answerCache.count == asked.count)
        clock.advance(seconds: 2)
        // Without an answer cache of its own, a responder on the same trusted cache writes with ldns.
        let writer = DNSResponder(resolver: responder.resolver)
        for (name, type, udpSize) in asked {
            let query = TestMessage.query(name.uppercased().replacingOccurrences(of: "EXAMPLE", with: "eXaMpLe"), type: type,
                                          id: 0xABCD, udpSize: udpSize)
            let cached = try await Self.ask(responder, query)
            #expect(cached == (try await Self.ask(writer, query)), "\(name)")
            let response = try #require(TestResponse(cached))
            #expect(response.id == 0xABCD && response.questions.first?.name == query.questionName)
            if name == "chain.example.test" {
                #expect(response.answers.map(\.ttl) == [28, 3, 3598])  // 30, 5, 3600 two seconds later
            } else if type == 1 {
                #expect(response.authority.map(\.ttl) == [58])  // the SOA's negative TTL, 60
            }
        }
        #expect(writer.answerCache.count == asked.count)
        // Every query was looked up in the trusted cache once: four misses, then hits.
        let statistics = responder.resolver.cache.statistics
        #expect(statistics.misses == 4 && statistics.hits + statistics.negativeHits == 12)
    }

    @Test func anEntryIsUsedOnlyWhileTheTrustedCacheKeepsItsAnswer() async throws {
        let clock = TestClock()
        let responder = try Self.responder(clock: clock)
        let query = TestMessage.query("cdn.example.test")
        _ = try await Self.ask(responder, query)
        _ = try await Self.ask(responder, query)
        guard case .ready = responder.prepare(query, over: .udp) else { Issue.record("a hit waits"); return }
        responder.resolver.cache.remove(try HostName.parse("cdn.example.test"))
        // The trusted cache no longer has it: resolved again, though the answer cache still has an entry.
        guard case .resolve = responder.prepare(query, over: .udp) else { Issue.record("an answer outlived the trusted cache's"); return }
        // Past the TTL (3600 s) the trusted cache's entry has expired: resolved again too.
        _ = try await Self.ask(responder, query)
        _ = try await Self.ask(responder, query)
        clock.advance(seconds: 3601)
        guard case .resolve = responder.prepare(query, over: .udp) else { Issue.record("an answer outlived its TTL"); return }
    }

    @Test func queriesThatDifferInMoreThanIDAndCaseHaveKeysOfTheirOwn() throws {
        let base = try #require(AnswerKey(query: TestMessage.query("www.example.test"), over: .udp))
        #expect(AnswerKey(query: TestMessage.query("WWW.Example.TEST", id: 9), over: .udp) == base)
        #expect(base.nameLength == 18)
        let others: [AnswerKey?] = [
            AnswerKey(query: TestMessage.query("www.example.test"), over: .tcp),
            AnswerKey(query: TestMessage.query("www.example.test", type: 28), over: .udp),
            AnswerKey(query: TestMessage.query("www.example.test", udpSize: 512), over: .udp),
            AnswerKey(query: TestMessage.query("www.example.test", udpSize: nil), over: .udp),
            AnswerKey(query: TestMessage.query("www.example.test", recursionDesired: false), over: .udp),
            AnswerKey(query: TestMessage.query("www.example.test", checkingDisabled: true), over: .udp),
            AnswerKey(query: TestMessage.query("www.example.tesu"), over: .udp),
        ]
        #expect(others.allSatisfy { $0 != nil && $0 != base })
        #expect(Set(others.compactMap { $0 }).count == others.count)
        // Not plain queries: ldns reads them, and they are never kept.
        var response = TestMessage.query("www.example.test")
        response[2] |= 0x80
        for message in [response, TestMessage.query("example.test", opcode: 4), HostileBytes.pointerLoop, HostileBytes.label64,
                        HostileBytes.name256, HostileBytes.noQuestion, HostileBytes.twoQuestions, HostileBytes.missingAnswers,
                        Array(TestMessage.query("www.example.test").prefix(20))] {
            #expect(AnswerKey(query: message, over: .udp) == nil)
        }
        #expect(AnswerKey(query: HostileBytes.name255, over: .udp) != nil)
        // Every truncation and random bytes: a key or none, never a read past the end.
        let query = TestMessage.query("www.example.test")
        let keys = (0...query.count).map { AnswerKey(query: Array(query.prefix($0)), over: .udp) }
        #expect(keys.prefix(12 + 18 + 4).allSatisfy { $0 == nil } && keys.last! == base)
        for bytes in HostileBytes.random(count: 2_000, seed: 15) { _ = AnswerKey(query: bytes, over: .udp) }
    }

    @Test func aTemplateFindsEveryTTLAndLeavesTheOPTRecordAlone() throws {
        let answer = DNSAnswer(rcode: .noerror, records: [
            DNSRecord(owner: .question, ttl: 30, data: .canonicalName("alias.example.test")),
            DNSRecord(owner: .name("alias.example.test"), ttl: 3600, data: .address(IPAddress("127.0.0.10")!)),
        ])
        let query = TestMessage.query("chain.example.test")
        guard case .query(let parsed) = IncomingMessage(wire: query) else { Issue.record("the query does not read"); return }
        let wire = try #require(ResponseWriter.write(answer, to: parsed.header, question: parsed.question, limit: 1232,
                                                     udpPayloadSize: 1232))
        let template = try #require(ReplyTemplate(message: wire, lifetimes: [30, 3600]))
        let asked = TestMessage.query("CHAIN.example.test", id: 77)
        let response = try #require(TestResponse(template.reply(to: asked, nameLength: 20, age: 100)))
        #expect(response.id == 77 && response.questions.first?.name == "CHAIN.example.test.")
        #expect(response.answers.map(\.ttl) == [0, 3500])
        #expect(response.udpSize == 1232 && response.rcode == 0)
        // One lifetime too few: the records are not what the caller thinks they are.
        #expect(ReplyTemplate(message: wire, lifetimes: [30]) == nil)
        // Cut inside the last record's address (the OPT record is 11 octets).
        #expect(ReplyTemplate(message: Array(wire.dropLast(13)), lifetimes: [30, 3600]) == nil)
    }
}

private extension [UInt8] {
    /// The question's name of a query, in presentation form with its final dot.
    var questionName: String? { TestResponse(self)?.questions.first?.name }
}
