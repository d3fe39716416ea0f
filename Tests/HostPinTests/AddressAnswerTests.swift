@testable import HostPin
import Testing

/// How a reply is read (``AddressAnswer/init(reading:name:type:)``) and how the A and AAAA answers of one
/// lookup combine: pure, on ``DNSReply`` values, no network.
@Suite struct AddressAnswerTests {
    private func read(_ reply: DNSReply, _ name: String = "x.test", _ type: RecordType = .a) -> AddressAnswer {
        AddressAnswer(reading: reply, name: name, type: type)
    }

    private func address(_ text: String, ttl: UInt32 = 60) -> ResolvedAddress {
        ResolvedAddress(address: IPAddress(text)!, ttl: ttl)
    }

    @Test func onlyRecordsOfTheTypeAskedAreTheAnswer() {
        let reply = DNSReply.response(to: "x.test", .a, answers: [
            .aaaa("x.test", "::1"), .a("x.test", "127.0.0.10", ttl: 30), .a("x.test", "127.0.0.11", ttl: 20),
        ])
        #expect(read(reply) == .addresses([address("127.0.0.10", ttl: 30), address("127.0.0.11", ttl: 20)], cnames: []))
        let v6 = DNSReply.response(to: "x.test", .aaaa, answers: [.a("x.test", "127.0.0.10"), .aaaa("x.test", "::1")])
        #expect(read(v6, "x.test", .aaaa) == .addresses([address("::1")], cnames: []))
    }

    @Test(arguments: [RecordType.a, .aaaa])
    func recordOfTheOtherTypeAloneIsNODATA(asked: RecordType) {
        let other: DNSReply.Record = asked == .a ? .aaaa("x.test", "::1") : .a("x.test", "127.0.0.10")
        let reply = DNSReply.response(to: "x.test", asked, answers: [other], authority: [.soa("test")])
        #expect(read(reply, "x.test", asked) == .nodata(soa: SOARecord(zone: "test", ttl: 3600, minimum: 60)))
    }

    @Test func recordsOfOtherOwnersOrClassesAreIgnored() {
        let reply = DNSReply.response(to: "x.test", .a, answers: [
            .a("y.test", "127.0.0.66"), .a("x.test", "127.0.0.67", dnsClass: 3), .a("sub.x.test", "127.0.0.68"),
        ])
        #expect(read(reply) == .nodata(soa: nil))
    }

    @Test func cnameChainIsFollowedInOrderWhateverTheRecordOrder() {
        let reply = DNSReply.response(to: "chain.test", .a, answers: [
            .a("www.test", "127.0.0.10", ttl: 3600),
            .cname("alias.test", "www.test", ttl: 5),
            .a("alias.test", "127.0.0.66"),  // not the end of the chain
            .cname("chain.test", "alias.test", ttl: 30),
        ])
        #expect(read(reply, "chain.test") == .addresses([address("127.0.0.10", ttl: 3600)], cnames: [
            CNAMERecord(alias: "chain.test", target: "alias.test", ttl: 30),
            CNAMERecord(alias: "alias.test", target: "www.test", ttl: 5),
        ]))
    }

    @Test func cnameWithoutAnAddressAtItsEndIsNODATA() {
        let reply = DNSReply.response(to: "alias.test", .aaaa, answers: [.cname("alias.test", "www.test"),
                                                                        .a("www.test", "127.0.0.10")])
        #expect(read(reply, "alias.test", .aaaa) == .nodata(soa: nil, cnames: [CNAMERecord(alias: "alias.test", target: "www.test", ttl: 60)]))
    }

    @Test func cnameLoopIsABadResponse() {
        let reply = DNSReply.response(to: "a.test", .a, answers: [.cname("a.test", "b.test"), .cname("b.test", "a.test")])
        #expect(read(reply, "a.test") == .failed(.badResponse))
    }

    @Test func replyWithTheQRBitClearIsABadResponse() {
        let reply = DNSReply.response(to: "x.test", .a, answers: [.a("x.test", "127.0.0.10")]).with(isResponse: false)
        #expect(read(reply) == .failed(.badResponse))
    }

    @Test func truncatedReplyIsABadResponse() {
        let reply = DNSReply.response(to: "x.test", .a, answers: [.a("x.test", "127.0.0.10")]).with(isTruncated: true)
        #expect(read(reply) == .failed(.badResponse))
    }

    @Test func replyToAnotherOpcodeIsABadResponse() {
        let reply = DNSReply.response(to: "x.test", .a, answers: [.a("x.test", "127.0.0.10")]).with(opcode: 2)
        #expect(read(reply) == .failed(.badResponse))
    }

    @Test(arguments: [
        [DNSReply.Question](),
        [DNSReply.Question(name: "y.test", type: .a, dnsClass: 1)],
        [DNSReply.Question(name: "x.test", type: .aaaa, dnsClass: 1)],
        [DNSReply.Question(name: "x.test", type: .a, dnsClass: 3)],
        [DNSReply.Question(name: "x.test", type: .a, dnsClass: 1), DNSReply.Question(name: "x.test", type: .a, dnsClass: 1)],
    ])
    func replyToAnotherQuestionIsABadResponse(questions: [DNSReply.Question]) {
        let reply = DNSReply.response(to: "x.test", .a, answers: [.a("x.test", "127.0.0.10")]).with(questions: questions)
        #expect(read(reply) == .failed(.badResponse))
    }

    @Test(arguments: [
        (UInt16(1), AddressAnswer.failed(.badResponse)),  // FORMERR
        (2, .failed(.servfail)),
        (3, .nxdomain(soa: nil)),
        (4, .failed(.badResponse)),  // NOTIMP
        (5, .failed(.refused)),
        (6, .failed(.badResponse)),  // YXDOMAIN, not an answer to a query
        (15, .failed(.badResponse)),  // unassigned
        (16, .failed(.badResponse)),  // BADVERS, an extended RCODE (RFC 6891 §9)
    ])
    func rcodeDecidesWhatAReplyWithoutRecordsMeans(rcode: UInt16, expected: AddressAnswer) {
        #expect(read(DNSReply.response(to: "x.test", .a, rcode: rcode)) == expected)
    }

    @Test func nxdomainCarriesTheSOAOfTheZoneItsNameIsIn() {
        let reply = DNSReply.response(to: "x.example.test", .a, rcode: 3, authority: [
            .soa("other.test", ttl: 10, minimum: 10), .soa("example.test", ttl: 3600, minimum: 60),
        ])
        #expect(read(reply, "x.example.test") == .nxdomain(soa: SOARecord(zone: "example.test", ttl: 3600, minimum: 60)))
    }

    @Test func negativeAnswerAfterACNAMETakesTheSOAOfTheTargetsZone() {
        let reply = DNSReply.response(to: "alias.one.test", .a, rcode: 3, answers: [.cname("alias.one.test", "gone.two.test")],
                                      authority: [.soa("two.test", ttl: 300, minimum: 30)])
        #expect(read(reply, "alias.one.test") == .nxdomain(soa: SOARecord(zone: "two.test", ttl: 300, minimum: 30),
                                                           cnames: [CNAMERecord(alias: "alias.one.test", target: "gone.two.test", ttl: 60)]))
    }

    @Test func rootSOAIsTheZoneOfEveryName() {
        let reply = DNSReply.response(to: "x.test", .a, rcode: 3, authority: [.soa("", ttl: 86400, minimum: 86400)])
        #expect(read(reply) == .nxdomain(soa: SOARecord(zone: "", ttl: 86400, minimum: 86400)))
    }

    struct Combination: Sendable, CustomTestStringConvertible {
        let a: AddressAnswer
        let aaaa: AddressAnswer
        let combined: AddressAnswer
        let testDescription: String
    }

    static let v4Address = ResolvedAddress(address: IPAddress("127.0.0.10")!, ttl: 60)
    static let v6Address = ResolvedAddress(address: IPAddress("::1")!, ttl: 30)
    static let v4 = AddressAnswer.addresses([v4Address], cnames: [])
    static let v6 = AddressAnswer.addresses([v6Address], cnames: [])
    static let soa = SOARecord(zone: "test", ttl: 60, minimum: 60)

    @Test(arguments: [
        Combination(a: v4, aaaa: v6, combined: .addresses([v4Address, v6Address], cnames: []),
                    testDescription: "addresses + addresses"),
        Combination(a: v4, aaaa: .nodata(soa: soa), combined: v4, testDescription: "addresses + NODATA"),
        Combination(a: .nxdomain(soa: nil), aaaa: v6, combined: v6, testDescription: "NXDOMAIN + addresses"),
        Combination(a: .nxdomain(soa: soa), aaaa: .nxdomain(soa: nil), combined: .nxdomain(soa: soa),
                    testDescription: "NXDOMAIN + NXDOMAIN"),
        Combination(a: .nxdomain(soa: nil), aaaa: .nodata(soa: soa), combined: .nodata(soa: soa),
                    testDescription: "NXDOMAIN + NODATA"),
        Combination(a: .nodata(soa: nil), aaaa: .nodata(soa: nil), combined: .nodata(soa: nil),
                    testDescription: "NODATA + NODATA"),
        Combination(a: v4, aaaa: .failed(.refused), combined: .partial([v4Address], cnames: [], failure: .refused),
                    testDescription: "addresses + REFUSED"),
        Combination(a: .failed(.servfail), aaaa: v6, combined: .partial([v6Address], cnames: [], failure: .servfail),
                    testDescription: "SERVFAIL + addresses"),
        Combination(a: .nodata(soa: nil), aaaa: .failed(.timeout), combined: .failed(.timeout),
                    testDescription: "NODATA + timeout"),
        Combination(a: .failed(.badResponse), aaaa: .nxdomain(soa: nil), combined: .failed(.badResponse),
                    testDescription: "bad response + NXDOMAIN"),
        Combination(a: .failed(.badResponse), aaaa: .failed(.timeout), combined: .failed(.badResponse),
                    testDescription: "bad response + timeout"),
    ])
    func answersOfBothFamiliesCombine(combination: Combination) {
        #expect(AddressAnswer.combining(combination.a, combination.aaaa) == combination.combined)
    }

    @Test func combinedCNAMEChainHoldsEachLinkOnce() {
        let link = CNAMERecord(alias: "alias.test", target: "www.test", ttl: 5)
        let a = AddressAnswer.addresses([ResolvedAddress(address: IPAddress("127.0.0.10")!, ttl: 60)], cnames: [link])
        let aaaa = AddressAnswer.addresses([ResolvedAddress(address: IPAddress("::1")!, ttl: 60)], cnames: [link])
        guard case .addresses(_, let cnames) = AddressAnswer.combining(a, aaaa) else {
            Issue.record("no addresses")
            return
        }
        #expect(cnames == [link])
    }
}
