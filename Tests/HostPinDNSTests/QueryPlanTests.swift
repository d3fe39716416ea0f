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

    /// The synthetic SOA record of a special-use zone (RFC 6303 §3's fields, TTL 60).
    private static func syntheticSOA(_ zone: String) -> DNSRecord.Data {
        .startOfAuthority(SOARecord(zone: zone, ttl: 60, primaryServer: zone, mailbox: "nobody.invalid", serial: 1,
                                    refresh: 3600, retry: 1200, expire: 604_800, minimum: 10_800))
    }

    /// Special-use names are answered for every type, never forwarded nor resolved: the RCODE, and the zone's
    /// synthetic SOA record in the authority section (in the answer section for an SOA query at the apex).
    @Test(arguments: [
        ("x.onion", 1, DNSResponseCode.nxdomain, "onion"), ("X.Onion", 15, .nxdomain, "onion"), ("x.invalid", 28, .nxdomain, "invalid"),
        ("x.invalid", 255, .nxdomain, "invalid"), ("printer.local", 1, .nxdomain, "local"),
        ("1.1.168.192.in-addr.arpa", 12, .nxdomain, "168.192.in-addr.arpa"), ("1.0.0.127.in-addr.arpa", 12, .nxdomain, "127.in-addr.arpa"),
        ("1.1.20.172.in-addr.arpa", 12, .nxdomain, "20.172.in-addr.arpa"), ("b.a.d.f.ip6.arpa", 12, .nxdomain, "d.f.ip6.arpa"),
        ("nas.home.arpa", 1, .nxdomain, "home.arpa"), ("home.arpa", 1, .noerror, "home.arpa"),
        ("_dns.resolver.arpa", 64, .noerror, "resolver.arpa"), ("resolver.arpa", 1, .noerror, "resolver.arpa"),
        ("localhost", 15, .noerror, "localhost"), ("a\\\\.onion", 16, .nxdomain, "onion"), ("a\\032b.onion", 1, .nxdomain, "onion"),
    ] as [(String, UInt16, DNSResponseCode, String)])
    func specialUseNamesAreAnsweredHere(name: String, type: UInt16, rcode: DNSResponseCode, zone: String) {
        let soa = DNSRecord(owner: .name(zone), ttl: 60, data: Self.syntheticSOA(zone))
        #expect(Self.plan(name, type: type) == .answer(DNSAnswer(rcode: rcode, authority: [soa])))
    }

    @Test func anSOAQueryAtASpecialUseApexIsAnsweredWithTheSOA() {
        #expect(Self.plan("home.arpa", type: 6) == .answer(DNSAnswer(rcode: .noerror, records: [
            DNSRecord(owner: .question, ttl: 60, data: Self.syntheticSOA("home.arpa")),
        ])))
    }

    @Test func localhostAddressesAreStillResolvedToLoopback() throws {
        #expect(Self.plan("localhost", type: 1) == .resolve(try HostName.parse("localhost"), .v4))
        #expect(Self.plan("app.localhost", type: 28) == .resolve(try HostName.parse("app.localhost"), .v6))
        // A name the resolver cannot take is answered here, as the resolver would.
        #expect(Self.plan("a\\032b.localhost", type: 28)
                    == .answer(DNSAnswer(rcode: .noerror, records: [DNSRecord(owner: .question, ttl: 0, data: .address(.loopbackV6))])))
    }

    @Test func aRuleStillDecidesForASpecialUseName() throws {
        let rules = try Rules(json: Data("""
            {"rules": [{"action": "pin", "host": "printer.home.arpa", "addresses": ["192.168.1.20"]}]}
            """.utf8), relativeTo: URL(fileURLWithPath: "/"))
        #expect(Self.plan("printer.home.arpa", type: 1, rules: rules)
                    == .answer(DNSAnswer(rcode: .noerror, records: [DNSRecord(owner: .question, ttl: 60, data: .address(IPAddress("192.168.1.20")!))])))
    }

    @Test(arguments: ["www.example.test", "x.test", "x.example", "8.8.8.8.in-addr.arpa"])
    func testAndExampleAndPublicReverseNamesAreStillForwarded(_ name: String) {
        #expect(Self.plan(name, type: 12) == .forward)
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
