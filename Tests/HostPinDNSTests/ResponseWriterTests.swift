import CLDNS
import HostPin
@testable import HostPinDNS
import Testing

@Suite struct ResponseWriterTests {
    private static func query(_ wire: [UInt8]) throws -> DNSQuery {
        guard case .query(let query) = IncomingMessage(wire: wire) else { throw Unreadable() }
        return query
    }

    private struct Unreadable: Error {}

    private static let www = DNSAnswer(rcode: .noerror, records: [
        DNSRecord(owner: .question, ttl: 5, data: .canonicalName("www.example.test")),
        DNSRecord(owner: .name("www.example.test"), ttl: 3600, data: .address(IPAddress("127.0.0.10")!)),
    ])

    private static func write(_ answer: DNSAnswer, for query: DNSQuery, limit: Int = 65_535) throws -> TestResponse {
        let wire = try #require(ResponseWriter.write(answer, to: query.header, question: query.question, limit: limit, udpPayloadSize: 1232))
        return try #require(TestResponse(wire))
    }

    @Test func theHeaderIsEchoedWithQRAndRASetAndAAClear() throws {
        let query = try Self.query(TestMessage.query("alias.example.test", id: 777, recursionDesired: false, checkingDisabled: true))
        let response = try Self.write(Self.www, for: query)
        #expect(response.id == 777)
        #expect(response.isResponse)
        #expect(response.opcode == 0)
        #expect(!response.recursionDesired)
        #expect(response.checkingDisabled)
        #expect(response.recursionAvailable)
        #expect(!response.authoritative)
        #expect(!response.truncated)
        #expect(response.rcode == 0)
    }

    @Test func theQuestionKeepsTheClientsLetterCaseAndSoDoesTheFirstOwner() throws {
        let query = try Self.query(TestMessage.query("AlIaS.eXaMpLe.TeSt"))
        let response = try Self.write(Self.www, for: query)
        #expect(response.questions.map(\.name) == ["AlIaS.eXaMpLe.TeSt."])
        #expect(response.answers.first?.owner == "AlIaS.eXaMpLe.TeSt.")
        // Names compare case-insensitively: ldns compresses the others' suffix into the question's.
        #expect(response.answers.map { "\($0.owner.lowercased()) \($0.type) \($0.ttl) \($0.data.lowercased())" } == [
            "alias.example.test. 5 5 www.example.test.", "www.example.test. 1 3600 127.0.0.10",
        ])
    }

    @Test func anOPTRecordIsSentOnlyToClientsThatSentOne() throws {
        let withEDNS = try Self.write(Self.www, for: Self.query(TestMessage.query("alias.example.test", udpSize: 4096)))
        let without = try Self.write(Self.www, for: Self.query(TestMessage.query("alias.example.test", udpSize: nil)))
        #expect(withEDNS.udpSize == 1232)
        #expect(without.udpSize == nil)
    }

    @Test func aResponseLongerThanTheLimitIsTruncatedToItsQuestion() throws {
        let many = DNSAnswer(rcode: .noerror, records: (1...100).map {
            DNSRecord(owner: .question, ttl: 60, data: .address(IPAddress("127.0.1.\($0)")!))
        })
        let query = try Self.query(TestMessage.query("big.example.test", udpSize: 1232))
        let full = try Self.write(many, for: query, limit: 65_535)
        #expect(full.answers.count == 100)
        #expect(!full.truncated)
        let cut = try Self.write(many, for: query, limit: 1232)
        #expect(cut.truncated)
        #expect(cut.answers.isEmpty)
        #expect(cut.questions.map(\.name) == ["big.example.test."])
        #expect(cut.udpSize == 1232)
    }

    @Test func badVersionTravelsInTheOPTRecord() throws {
        let query = try Self.query(TestMessage.query("www.example.test", ednsVersion: 1))
        let response = try Self.write(DNSAnswer(rcode: .badvers), for: query)
        #expect(response.rcode == 16)
    }

    @Test func hinfoCarriesTheTwoStrings() throws {
        let response = try Self.write(.minimalAny, for: Self.query(TestMessage.query("www.example.test", type: 255)))
        #expect(response.answers == [TestResponse.Record(owner: "www.example.test.", type: 13, ttl: 3600, data: "\"RFC8482\" \"\"")])
    }

    @Test func aFormatErrorWithoutQuestionEchoesTheHeader() throws {
        guard case .reject(let header, let question, let rcode) = IncomingMessage(wire: HostileBytes.pointerLoop) else {
            Issue.record("not rejected")
            return
        }
        let wire = try #require(ResponseWriter.write(DNSAnswer(rcode: rcode), to: header, question: question, limit: 512, udpPayloadSize: 1232))
        let response = try #require(TestResponse(wire))
        #expect(response.id == 0xBEEF)
        #expect(response.rcode == 1)
        #expect(response.questions.isEmpty)
        #expect(response.recursionDesired)
    }

    @Test func aRelayedReplyKeepsItsRecordsUnderTheClientsHeader() throws {
        let query = try Self.query(TestMessage.query("WwW.example.test", type: 16, id: 99))
        let reply = Self.reply(to: "www.example.test", type: 16, rcode: 0, isResponse: true)
        let wire = try #require(ResponseWriter.relay(reply, to: query, limit: 1232, udpPayloadSize: 1232))
        let response = try #require(TestResponse(wire))
        #expect(response.id == 99)
        #expect(response.questions.map(\.name) == ["WwW.example.test."])
        #expect(response.recursionAvailable)
        #expect(response.answers.map(\.data) == ["\"hello\""])
        #expect(response.authority.map(\.type) == [6])
    }

    @Test func aCachedReplysTTLsAreCountedDownByItsAge() throws {
        let query = try Self.query(TestMessage.query("www.example.test", type: 16))
        let reply = Self.reply(to: "www.example.test", type: 16, rcode: 0, isResponse: true)
        let wire = try #require(ResponseWriter.relay(reply, to: query, age: 100, limit: 1232, udpPayloadSize: 1232))
        let response = try #require(TestResponse(wire))
        #expect(response.answers.map(\.ttl) == [200])
        #expect(response.authority.map(\.ttl) == [0])  // 60 − 100: none left, not a wrapped-around TTL
    }

    @Test func aReplyToAnotherQuestionOrNoResponseIsNotRelayed() throws {
        let query = try Self.query(TestMessage.query("www.example.test", type: 16))
        #expect(ResponseWriter.relay(Self.reply(to: "cdn.example.test", type: 16, rcode: 0, isResponse: true), to: query,
                                     limit: 1232, udpPayloadSize: 1232) == nil)
        #expect(ResponseWriter.relay(Self.reply(to: "www.example.test", type: 15, rcode: 0, isResponse: true), to: query,
                                     limit: 1232, udpPayloadSize: 1232) == nil)
        #expect(ResponseWriter.relay(Self.reply(to: "www.example.test", type: 16, rcode: 0, isResponse: false), to: query,
                                     limit: 1232, udpPayloadSize: 1232) == nil)
        #expect(ResponseWriter.relay([1, 2, 3], to: query, limit: 1232, udpPayloadSize: 1232) == nil)
    }

    /// An upstream's reply to `name`: a TXT answer and an SOA in the authority section.
    private static func reply(to name: String, type: UInt16, rcode: UInt8, isResponse: Bool) -> [UInt8] {
        var built: UnsafeMutablePointer<ldns_pkt>?
        _ = ldns_pkt_query_new_frm_str(&built, name, ldns_rr_type(rawValue: UInt32(type)), LDNS_RR_CLASS_IN, 0)
        let packet = built!
        defer { ldns_pkt_free(packet) }
        ldns_pkt_set_qr(packet, isResponse)
        ldns_pkt_set_rcode(packet, rcode)
        var answer: UnsafeMutablePointer<ldns_rr>?
        _ = ldns_rr_new_frm_str(&answer, "\(name). 300 IN TXT \"hello\"", 0, nil, nil)
        ldns_pkt_push_rr(packet, LDNS_SECTION_ANSWER, answer)
        var soa: UnsafeMutablePointer<ldns_rr>?
        _ = ldns_rr_new_frm_str(&soa, "example.test. 60 IN SOA ns.example.test. hostmaster.example.test. 1 3600 600 86400 60", 0, nil, nil)
        ldns_pkt_push_rr(packet, LDNS_SECTION_AUTHORITY, soa)
        return TestMessage.wire(packet)
    }
}
