import Foundation
import HostPin
@testable import HostPinDNS
import Testing

@Suite struct QueryPlanTests {
    private static func plan(_ name: String, type: UInt16 = 1, dnsClass: UInt16 = 1, ednsVersion: UInt8 = 0,
                             rules: Rules = Rules(), blocked: BlockedAnswer = .nxdomain) -> QueryPlan? {
        guard case .query(let query) = IncomingMessage(wire: TestMessage.query(name, type: type, dnsClass: dnsClass,
                                                                               ednsVersion: ednsVersion)) else { return nil }
        return QueryPlan.make(for: query, rules: rules, blocked: blocked)
    }

    private static let rules = try! Rules(json: Data("""
        {"rules": [
          {"action": "block", "host": "ads.example.test"},
          {"action": "pin", "host": "api.example.test", "addresses": ["127.0.0.10", "::1"]},
          {"action": "pin", "host": "v4pin.example.test", "addresses": ["127.0.0.11"]},
          {"action": "pass", "host": "intranet.example.test"},
          {"action": "header", "host": "*.example.test", "set": {"X-Client": "hostpin"}}
        ]}
        """.utf8), relativeTo: URL(fileURLWithPath: "/"))

    @Test func aAndAAAAAreResolvedInTheirFamilyWithTheNameLowerCased() throws {
        #expect(Self.plan("WWW.Example.Test", type: 1) == .resolve(try HostName.parse("www.example.test"), .v4))
        #expect(Self.plan("www.example.test", type: 28) == .resolve(try HostName.parse("www.example.test"), .v6))
    }

    @Test func anyGetsOneHINFORecord() {
        #expect(Self.plan("www.example.test", type: 255) == .answer(.minimalAny))
    }

    @Test(arguments: [15, 16, 33, 65, 12, 64] as [UInt16])  // MX, TXT, SRV, HTTPS, PTR, SVCB
    func otherTypesAreForwarded(_ type: UInt16) {
        #expect(Self.plan("www.example.test", type: type) == .forward)
    }

    @Test(arguments: ["127.0.0.1", "1.0.0.10.in-addr.arpa.1", "a\\.b.example.test", "caf\\233.example.test"])
    func namesThatAreNoHostNamesAreForwarded(_ name: String) {
        #expect(Self.plan(name) == .forward)
    }

    @Test func theRootIsForwarded() {
        #expect(Self.plan(".", type: 2) == .forward)
    }

    @Test(arguments: [3, 4, 255] as [UInt16])  // CH, HS, ANY
    func classesOtherThanINAreRefused(_ dnsClass: UInt16) {
        #expect(Self.plan("version.bind", type: 16, dnsClass: dnsClass) == .answer(.refused))
    }

    @Test(arguments: [251, 252] as [UInt16])
    func zoneTransfersAreRefused(_ type: UInt16) {
        #expect(Self.plan("example.test", type: type) == .answer(.refused))
    }

    @Test func anEDNSVersionOtherThanZeroIsBadVersion() {
        #expect(Self.plan("www.example.test", ednsVersion: 1) == .answer(DNSAnswer(rcode: .badvers)))
    }

    @Test func aBlockedNameIsNXDOMAINForEveryType() {
        for type: UInt16 in [1, 28, 255, 15] {
            #expect(Self.plan("ads.example.test", type: type, rules: Self.rules) == .answer(.nxdomain), "type \(type)")
        }
    }

    @Test func aBlockedNameCanBeAnsweredWithTheUnspecifiedAddress() {
        let v4 = Self.plan("ads.example.test", type: 1, rules: Self.rules, blocked: .unspecified)
        let v6 = Self.plan("ads.example.test", type: 28, rules: Self.rules, blocked: .unspecified)
        #expect(v4 == .answer(DNSAnswer(rcode: .noerror, records: [DNSRecord(owner: .question, ttl: 60, data: .address(IPAddress("0.0.0.0")!))])))
        #expect(v6 == .answer(DNSAnswer(rcode: .noerror, records: [DNSRecord(owner: .question, ttl: 60, data: .address(IPAddress("::")!))])))
        #expect(Self.plan("ads.example.test", type: 15, rules: Self.rules, blocked: .unspecified) == .answer(.nxdomain))
    }

    @Test func aPinnedNameIsAnsweredWithItsAddressesOfTheFamily() {
        #expect(Self.plan("api.example.test", type: 1, rules: Self.rules)
                    == .answer(DNSAnswer(rcode: .noerror, records: [DNSRecord(owner: .question, ttl: 60, data: .address(IPAddress("127.0.0.10")!))])))
        #expect(Self.plan("api.example.test", type: 28, rules: Self.rules)
                    == .answer(DNSAnswer(rcode: .noerror, records: [DNSRecord(owner: .question, ttl: 60, data: .address(IPAddress("::1")!))])))
        #expect(Self.plan("v4pin.example.test", type: 28, rules: Self.rules) == .answer(.nodata))
        #expect(Self.plan("api.example.test", type: 15, rules: Self.rules) == .forward)
    }

    @Test func passAndHeaderRulesLeaveTheNameToTheResolver() throws {
        #expect(Self.plan("intranet.example.test", rules: Self.rules) == .resolve(try HostName.parse("intranet.example.test"), .v4))
        #expect(Self.plan("www.example.test", rules: Self.rules) == .resolve(try HostName.parse("www.example.test"), .v4))
    }
}
