import CLDNS
@testable import HostPin
import Testing

/// Reading replies (``DNSReply/init(wire:)``) with ldns and building queries (``AddressQuery``) with
/// c-ares and ldns, on messages ldns makes from zone-file text: no network.
@Suite struct DNSMessageTests {
    @Test func replyIsReadWithItsHeaderQuestionAndRecords() throws {
        let wire = try WireMessage(question: "Alias.Example.Test. IN A", answers: [
            "alias.example.test. 5 IN CNAME WWW.example.test.",
            "www.example.test. 3600 IN A 127.0.0.10",
            "www.example.test. 3600 IN AAAA ::1",
            "www.example.test. 3600 IN TXT \"other\"",
        ], authority: ["example.test. 3600 IN SOA ns.example.test. hostmaster.example.test. 1 3600 600 86400 60"]).bytes
        let reply = try #require(DNSReply(wire: wire))
        #expect(reply == DNSReply(
            isResponse: true, opcode: 0, isTruncated: false, rcode: 0,
            questions: [DNSReply.Question(name: "alias.example.test", type: .a, dnsClass: 1)],
            answers: [
                .cname("alias.example.test", "www.example.test", ttl: 5),
                .a("www.example.test", "127.0.0.10", ttl: 3600),
                .aaaa("www.example.test", "::1", ttl: 3600),
                DNSReply.Record(owner: "www.example.test", type: RecordType(rawValue: 16), dnsClass: 1, ttl: 3600,
                                data: .other),
            ],
            authority: [.soa("example.test", ttl: 3600, minimum: 60)]))
    }

    @Test func headerFlagsAndRCODEAreRead() throws {
        var message = WireMessage(question: "x.test. IN AAAA")
        message.isResponse = false
        message.isTruncated = true
        message.opcode = 2
        message.rcode = 15
        let reply = try #require(DNSReply(wire: try message.bytes))
        #expect(!reply.isResponse)
        #expect(reply.isTruncated)
        #expect(reply.opcode == 2)
        #expect(reply.rcode == 15)
        #expect(reply.questions == [DNSReply.Question(name: "x.test", type: .aaaa, dnsClass: 1)])
    }

    @Test func extendedRCODEFromTheOPTRecordIsPartOfTheRCODE() throws {
        var message = WireMessage(question: "x.test. IN A")
        message.extendedRcode = 1  // with header RCODE 0: 16, BADVERS (RFC 6891 §6.1.3)
        #expect(try #require(DNSReply(wire: try message.bytes)).rcode == 16)
    }

    @Test func rootNameAndEscapedDotsKeepTheirMeaning() throws {
        let wire = try WireMessage(question: "x.test. IN A", answers: ["a\\.b.test. 60 IN CNAME x.test."],
                                   authority: [". 86400 IN SOA a.root-servers.net. nstld.verisign-grs.com. 1 1800 900 604800 86400"]).bytes
        let reply = try #require(DNSReply(wire: wire))
        #expect(reply.answers.map(\.owner) == ["a\\.b.test"])
        #expect(reply.authority == [DNSReply.Record(
            owner: "", type: .soa, dnsClass: 1, ttl: 86400,
            data: .soa(primaryServer: "a.root-servers.net", mailbox: "nstld.verisign-grs.com", serial: 1, refresh: 1800,
                       retry: 900, expire: 604800, minimum: 86400))])
    }

    @Test func messageCutShortIsNotAReply() throws {
        let wire = try WireMessage(question: "x.test. IN A", answers: ["x.test. 60 IN A 127.0.0.10"]).bytes
        #expect(DNSReply(wire: Array(wire.dropLast(2))) == nil)
        #expect(DNSReply(wire: Array(wire.prefix(11))) == nil)  // shorter than a header
        #expect(DNSReply(wire: []) == nil)
    }

    @Test(arguments: [true, false]) func queriesAskOneQuestionEachWithRecursionAndEDNS(builtByCAres: Bool) throws {
        let name = try HostName.parse("xn--bcher-kva.example.test")
        let queries = try #require(builtByCAres ? AddressQuery.messages(for: name, types: [.a, .aaaa])
                                                : AddressQuery.messages(for: name.text, types: [.a, .aaaa]))
        #expect(queries.count == 2)
        for (query, type) in zip(queries, [RecordType.a, .aaaa]) {
            try withPacket(query) { packet in
                #expect(!ldns_pkt_qr(packet))
                #expect(ldns_pkt_rd(packet))
                #expect(ldns_pkt_get_opcode(packet) == LDNS_PACKET_QUERY)
                #expect(ldns_pkt_edns(packet))
                #expect(ldns_pkt_edns_udp_size(packet) == 1232)
                #expect(!ldns_pkt_edns_do(packet))
                #expect(ldns_pkt_ancount(packet) == 0 && ldns_pkt_nscount(packet) == 0)
            }
            let parsed = try #require(DNSReply(wire: query))
            #expect(parsed.questions == [DNSReply.Question(name: "xn--bcher-kva.example.test", type: type, dnsClass: 1)])
        }
    }

    @Test func cAresBuildsAHostNamesQueryAsLDNSDoes() throws {
        let name = try HostName.parse("_sip.Host-1.example.test.")
        for type in [RecordType.a, .aaaa] {
            let byCAres = try #require(AddressQuery.messages(for: name, types: [type])?.first)
            let byLDNS = try #require(AddressQuery.messages(for: name.text, types: [type])?.first)
            #expect(byCAres.dropFirst(2) == byLDNS.dropFirst(2))  // every octet but the random ID
        }
    }

    @Test func queryIDsAreUnpredictable() throws {
        let queries = try (1...4).flatMap { _ in
            try #require(AddressQuery.messages(for: try HostName.parse("www.example.test"), types: [.a, .aaaa]))
        }
        let ids = try queries.map { query in try withPacket(query) { ldns_pkt_id($0) } }
        #expect(Set(ids).count > 1)  // eight equal random IDs: odds of 2^-112
    }

    private func withPacket<T>(_ wire: [UInt8], _ body: (UnsafeMutablePointer<ldns_pkt>) throws -> T) throws -> T {
        var parsed: UnsafeMutablePointer<ldns_pkt>?
        try #require(wire.withUnsafeBufferPointer { ldns_wire2pkt(&parsed, $0.baseAddress, $0.count) } == LDNS_STATUS_OK)
        let packet = try #require(parsed)
        defer { ldns_pkt_free(packet) }
        return try body(packet)
    }
}
