import HostPin
import HostPinNet
import HostPinTestSupport
@testable import HostPinDNS
import Testing

/// The responder against the lab's NSD (zone example.test), without sockets of its own.
@Suite struct DNSResponderTests {
    private static func ask(_ responder: DNSResponder, _ name: String, type: UInt16 = 1, udpSize: UInt16? = 1232,
                            over transport: DNSTransport = .udp, id: UInt16 = 0x1234) async throws -> TestResponse {
        let wire = try #require(await responder.respond(to: TestMessage.query(name, type: type, id: id, udpSize: udpSize), over: transport))
        return try #require(TestResponse(wire))
    }

    @Test func anAddressIsAnsweredFromTheTrustedUpstream() async throws {
        let response = try await Self.ask(StubLab.responder(), "www.example.test")
        #expect(response.rcode == 0)
        let answer = try #require(response.answers.first)
        #expect(response.answers.count == 1)
        #expect(answer.owner == "www.example.test." && answer.type == 1 && answer.data == "127.0.0.10")
        // Counted down from 3600 by the whole seconds since the answer arrived: a loaded machine may
        // take a second or two between the upstream's reply and this response.
        #expect(answer.ttl <= 3600 && answer.ttl >= 3595)
    }

    @Test func anAliasIsAnsweredWithItsCNAMEChain() async throws {
        let response = try await Self.ask(StubLab.responder(), "chain.example.test")
        #expect(response.answers.map { "\($0.owner) \($0.type) \($0.data)" } == [
            "chain.example.test. 5 alias.example.test.",
            "alias.example.test. 5 www.example.test.",
            "www.example.test. 1 127.0.0.10",
        ])
        // Each record's own TTL (30, 5, 3600), counted down by at most a few seconds of a loaded machine.
        let ttls = response.answers.map(\.ttl)
        #expect(ttls.count == 3 && zip(ttls, [30, 5, 3600] as [UInt32]).allSatisfy { $0 <= $1 && $0 + 5 >= $1 })
    }

    @Test func aaaaIsAnswered() async throws {
        let response = try await Self.ask(StubLab.responder(), "v6only.example.test", type: 28)
        #expect(response.data(ofType: 28) == ["::1"])
    }

    /// example.test's SOA record as a negative answer carries it: TTL min(3600, MINIMUM 60) (RFC 2308 §3).
    private static let soa = TestResponse.Record(owner: "example.test.", type: 6, ttl: 60,
                                                 data: "ns.example.test. hostmaster.example.test. 2024010101 3600 600 86400 60")

    @Test func aMissingNameIsNXDOMAINWithTheZonesSOA() async throws {
        let response = try await Self.ask(StubLab.responder(), "nx.example.test")
        #expect(response.rcode == 3)
        #expect(response.answers.isEmpty)
        // Just received: age 0, so the negative TTL whole.
        #expect(response.authority == [Self.soa])
    }

    @Test func aNameWithoutTheFamilyIsNODATAWithTheZonesSOA() async throws {
        let response = try await Self.ask(StubLab.responder(), "v6only.example.test", type: 1)
        #expect(response.rcode == 0)
        #expect(response.answers.isEmpty)
        #expect(response.authority == [Self.soa])
    }

    @Test func nodataThroughAnAliasCarriesTheCNAMEChainAndTheSOA() async throws {
        // As NSD answers it: the two CNAMEs to www, which has no AAAA, and the zone's SOA.
        let response = try await Self.ask(StubLab.responder(), "chain.example.test", type: 28)
        #expect(response.rcode == 0)
        #expect(response.answers == [
            TestResponse.Record(owner: "chain.example.test.", type: 5, ttl: 30, data: "alias.example.test."),
            TestResponse.Record(owner: "alias.example.test.", type: 5, ttl: 5, data: "www.example.test."),
        ])
        #expect(response.authority == [Self.soa])
    }

    @Test func aCachedNegativeAnswersSOAIsCountedDown() async throws {
        let responder = try StubLab.responder()
        _ = try await Self.ask(responder, "nx.example.test")
        try await Task.sleep(for: .milliseconds(1100))
        let later = try await Self.ask(responder, "nx.example.test")
        #expect(later.rcode == 3)
        let ttl = try #require(later.authority.first?.ttl)
        // At least the second slept; a loaded machine may add a few.
        #expect(later.authority.count == 1 && ttl < 60 && ttl >= 50)
    }

    @Test func aCachedAnswersTTLIsCountedDown() async throws {
        let responder = try StubLab.responder()
        let first = try await Self.ask(responder, "cdn.example.test")
        try await Task.sleep(for: .milliseconds(1100))
        let second = try await Self.ask(responder, "cdn.example.test")
        let firstTTL = try #require(first.answers.first?.ttl)
        #expect(firstTTL <= 3600 && firstTTL >= 3595)
        let ttl = try #require(second.answers.first?.ttl)
        #expect(ttl < firstTTL && ttl >= 3585)
    }

    @Test func aCacheHitIsReadyAtOnceAndEveryLookupIsCountedOnce() async throws {
        let responder = try StubLab.responder()
        let query = TestMessage.query("www.example.test", id: 7)
        // A miss waits for the trusted upstream; its answer then makes the next query a hit, ready at once.
        let miss = responder.prepare(query, over: .udp)
        guard case .resolve = miss else { Issue.record("a miss is ready at once: \(miss)"); return }
        let answered = try #require(await responder.finish(miss, over: .udp).bytes)
        let first = try #require(TestResponse(answered))
        guard case .ready(let reply) = responder.prepare(query, over: .udp), let wire = reply.bytes else {
            Issue.record("a hit waits")
            return
        }
        let hit = try #require(TestResponse(wire))
        #expect(hit.id == 7 && hit.data(ofType: 1) == ["127.0.0.10"] && first.data(ofType: 1) == ["127.0.0.10"])
        let nxdomain = try await Self.ask(responder, "nx.example.test")
        #expect(nxdomain.rcode == 3)
        let statistics = responder.resolver.cache.statistics
        #expect(statistics.misses == 2)
        #expect(statistics.hits == 1)
    }

    @Test func aBigAnswerIsTruncatedOverUDPAndWholeOverTCP() async throws {
        let responder = try StubLab.responder()
        // 4096: the client could take it, but the stub sends at most its own 1232 over UDP.
        for udpSize: UInt16? in [nil, 512, 1232, 4096] {
            let response = try await Self.ask(responder, "big.example.test", udpSize: udpSize)
            #expect(response.truncated, "EDNS size \(String(describing: udpSize))")
            #expect(response.answers.isEmpty)
            #expect(response.questions.map(\.name) == ["big.example.test."])
        }
        let larger = DNSResponder(resolver: responder.resolver, udpPayloadSize: 4096)
        let large = try await Self.ask(larger, "big.example.test", udpSize: 4096)
        #expect(!large.truncated)
        #expect(large.answers.count == 100)
        #expect(large.udpSize == 4096)
        let tcp = try await Self.ask(responder, "big.example.test", udpSize: nil, over: .tcp)
        #expect(!tcp.truncated)
        #expect(Set(tcp.data(ofType: 1)) == Set((1...100).map { "127.0.1.\($0)" }))
    }

    @Test func otherTypesAreRefusedWithoutAForwarder() async throws {
        let response = try await Self.ask(StubLab.responder(), "www.example.test", type: 15)
        #expect(response.rcode == 5)
    }

    @Test func mxAndTXTAreForwardedToTheTrustedUpstreams() async throws {
        let (responder, _) = try StubLab.forwarding()
        let mx = try await Self.ask(responder, "Example.TEST", type: 15, id: 4321)
        #expect(mx.id == 4321)
        #expect(mx.rcode == 0)
        #expect(mx.questions.map(\.name) == ["Example.TEST."])
        // ldns compresses names against the question's, so they come in the client's letter case.
        #expect(mx.answers == [TestResponse.Record(owner: "Example.TEST.", type: 15, ttl: 3600, data: "10 mail.Example.TEST.")])
        let txt = try await Self.ask(responder, "info.example.test", type: 16, over: .tcp)
        #expect(txt.answers == [TestResponse.Record(owner: "info.example.test.", type: 16, ttl: 300,
                                                    data: "\"hostpin lab\" \"forwarded\"")])
        let ns = try await Self.ask(responder, "example.test", type: 2)
        #expect(ns.data(ofType: 2) == ["ns.example.test."])
    }

    @Test func aMissingTXTNameIsNXDOMAINWithTheZonesSOA() async throws {
        let (responder, _) = try StubLab.forwarding()
        let nxdomain = try await Self.ask(responder, "nx.example.test", type: 16)
        #expect(nxdomain.rcode == 3)
        #expect(nxdomain.answers.isEmpty)
        #expect(nxdomain.authority == [Self.soa])
        let nodata = try await Self.ask(responder, "www.example.test", type: 16)
        #expect(nodata.rcode == 0)
        #expect(nodata.answers.isEmpty)
        #expect(nodata.authority == [Self.soa])
    }

    @Test func aSERVFAILingFirstUpstreamIsSkippedForTheSecond() async throws {
        let failing = try await FaultServer(mode: .servfail, upstream: nil)
        defer { failing.stop() }
        let (responder, trusted) = try StubLab.forwarding(through: [failing.address, Lab.current().trustedDNS])
        let response = try await Self.ask(responder, "info.example.test", type: 16)
        #expect(response.rcode == 0)
        #expect(response.data(ofType: 16) == ["\"hostpin lab\" \"forwarded\""])
        #expect(failing.queries.map(\.description) == ["udp TXT info.example.test servfail"])
        #expect(trusted.health.status(of: failing.address) == .healthy)  // one name's SERVFAIL is no outage
    }

    @Test func aForwardedAnswerIsCachedForItsTTL() async throws {
        let own = try await AuthoritativeServer()
        let (responder, _) = try StubLab.forwarding(through: [own.address])
        let first = try await Self.ask(responder, "info.example.test", type: 16)
        let asked = try await own.queries()
        let second = try await Self.ask(responder, "INFO.example.test", type: 16, id: 99)
        #expect(try await own.queries() == asked)  // from the cache: no query upstream
        #expect(second.id == 99)
        #expect(second.questions.map(\.name) == ["INFO.example.test."])
        #expect(second.data(ofType: 16) == first.data(ofType: 16))
        // The same record counted down from 300: a second may pass between the two on a loaded machine.
        #expect(first.answers.map(\.ttl) == [300])
        #expect(second.answers.allSatisfy { (295...300).contains($0.ttl) })
        try await Task.sleep(for: .milliseconds(1100))
        let later = try await Self.ask(responder, "info.example.test", type: 16)
        #expect(try await own.queries() == asked)
        let ttl = try #require(later.answers.first?.ttl)
        #expect(ttl < 300 && ttl >= 290)
        // Another type of the same name is another question.
        _ = try await Self.ask(responder, "info.example.test", type: 15)
        #expect(try await own.queries() == asked + 1)
    }

    @Test func aForwarderWithoutReplyGivesSERVFAIL() async throws {
        let response = try await Self.ask(StubLab.responder(forwarder: SilentForwarder()), "www.example.test", type: 16)
        #expect(response.rcode == 2)
    }

    @Test func upstreamsThatDoNotAnswerGiveSERVFAIL() async throws {
        let silent = try await FaultServer(mode: .drop, upstream: nil)
        defer { silent.stop() }
        let responder = try StubLab.responder(upstream: silent.address, budget: .milliseconds(600))
        let response = try await Self.ask(responder, "www.example.test")
        #expect(response.rcode == 2)
    }

    @Test func anOpcodeOtherThanQueryIsNOTIMPAndAClassOtherThanINIsREFUSED() async throws {
        let responder = try StubLab.responder()
        let notify = try #require(await responder.respond(to: TestMessage.query("example.test", type: 6, opcode: 4), over: .udp))
        let notimp = try #require(TestResponse(notify))
        #expect(notimp.rcode == 4)
        #expect(notimp.opcode == 4)
        #expect(notimp.questions.map(\.name) == ["example.test."])
        let chaos = try #require(await responder.respond(to: TestMessage.query("version.bind", type: 16, dnsClass: 3), over: .udp))
        #expect(TestResponse(chaos)?.rcode == 5)
    }

    /// An opcode other than QUERY is answered as Unbound does: NOTIMP, QR, the ID, opcode and RD echoed,
    /// the question too; RA, AD and CD are for QUERY (RFC 1035 §4.1.1, RFC 4035 §3.1.6), so clear.
    /// Before, RA was set and CD echoed.
    @Test(arguments: [(15, true, true), (15, false, false), (15, true, false), (5, false, true)] as [(UInt8, Bool, Bool)])
    func anOpcodeOtherThanQueryIsNOTIMPWithoutRAOrCD(opcode: UInt8, recursionDesired: Bool, checkingDisabled: Bool) async throws {
        let responder = try StubLab.responder()
        let query = TestMessage.query("www.example.test", id: 0x4321, recursionDesired: recursionDesired,
                                      checkingDisabled: checkingDisabled, opcode: opcode)
        let wire = try #require(await responder.respond(to: query, over: .udp))
        let response = try #require(TestResponse(wire))
        #expect(response.rcode == 4)
        #expect(response.id == 0x4321 && response.isResponse && response.opcode == opcode)
        #expect(response.recursionDesired == recursionDesired)
        #expect(!response.recursionAvailable && !response.authenticData && !response.checkingDisabled && !response.authoritative)
        #expect(response.questions.map(\.name) == ["www.example.test."])
        #expect(response.answers.isEmpty && response.authority.isEmpty)
        #expect(response.udpSize == 1232)
    }

    /// RFC 8945 §5.2.1, §5.3.2: the stub holds no TSIG keys, so a signed query is NOTAUTH with an unsigned
    /// TSIG (MAC size 0) for the same key and algorithm, error BADKEY (17), the query's time, fudge and ID.
    /// Before, it was answered as if unsigned (NOERROR, the address, no TSIG).
    @Test(arguments: [1232, nil] as [UInt16?])
    func aSignedQueryIsNOTAUTHWithAnUnsignedBADKEY(udpSize: UInt16?) async throws {
        let responder = try StubLab.responder()
        let query = TestMessage.signedQuery("www.example.test", id: 0x5151, udpSize: udpSize)
        let sent = try #require(TestResponse(query)?.tsig)
        let wire = try #require(await responder.respond(to: query, over: .udp))
        let response = try #require(TestResponse(wire))
        #expect(response.rcode == 9)
        #expect(response.id == 0x5151 && response.isResponse && response.recursionDesired)
        #expect(response.questions.map(\.name) == ["www.example.test."])
        #expect(response.answers.isEmpty && response.authority.isEmpty)
        #expect(response.udpSize == udpSize)
        #expect(response.tsig == TestResponse.TSIG(keyName: TestMessage.tsigKeyName, algorithm: "hmac-sha256.",
                                                    timeSigned: sent.timeSigned, fudge: 300, macSize: 0, originalID: 0x5151,
                                                    error: 17, otherLength: 0))
    }

    /// RFC 8945 §5.2: a TSIG that is not the last additional record (an OPT after it, or a second TSIG) is
    /// FORMERR, without a TSIG. Before, the query was answered as if unsigned.
    @Test(arguments: TestMessage.SignedTrailer.allCases)
    func aTSIGThatIsNotLastIsFORMERR(_ trailer: TestMessage.SignedTrailer) async throws {
        let responder = try StubLab.responder()
        let query = TestMessage.signedQuery("www.example.test", followedBy: trailer)
        let wire = try #require(await responder.respond(to: query, over: .udp))
        let response = try #require(TestResponse(wire))
        #expect(response.rcode == 1)
        #expect(response.id == 0x1234)
        #expect(response.questions.map(\.name) == ["www.example.test."])
        #expect(response.answers.isEmpty)
        #expect(response.tsig == nil)
    }

    @Test func aResponseIsDroppedAndGarbageWithAHeaderIsFORMERR() async throws {
        let responder = try StubLab.responder()
        var response = TestMessage.query("www.example.test")
        response[2] |= 0x80
        #expect(await responder.respond(to: response, over: .udp) == nil)
        #expect(await responder.respond(to: [1, 2, 3], over: .udp) == nil)
        let wire = try #require(await responder.respond(to: HostileBytes.pointerLoop, over: .udp))
        let formerr = try #require(TestResponse(wire))
        #expect(formerr.rcode == 1)
        #expect(formerr.id == 0xBEEF)
    }

    @Test func twoOPTRecordsAreFORMERR() async throws {
        let responder = try StubLab.responder()
        let wire = try #require(await responder.respond(to: HostileBytes.optRecords(2), over: .udp))
        let formerr = try #require(TestResponse(wire))
        #expect(formerr.rcode == 1)
        #expect(formerr.id == 0xBEEF)
        #expect(formerr.answers.isEmpty)
        #expect(formerr.questions.map(\.name) == ["www.example.test."])
    }
}
