import Foundation
import HostPin
@testable import HostPinDNS
import Testing

@Suite struct DNSAnswerTests {
    private static let received = Date(timeIntervalSince1970: 1_700_000_000)

    private static func resolution(cnames: [CNAMERecord] = [], addresses: [(String, UInt32)]) throws -> Resolution {
        Resolution(name: try HostName.parse("chain.example.test"),
                   addresses: addresses.map { ResolvedAddress(address: IPAddress($0.0)!, ttl: $0.1) },
                   cnames: cnames, upstream: Upstream("127.0.0.1:53"), source: .cache, receivedAt: received)
    }

    private static func outcome(_ resolution: Resolution, age: UInt32) -> ResolutionOutcome {
        ResolutionOutcome(answer: .addresses(resolution), ttlLeft: resolution.ttl > age ? resolution.ttl - age : 0, age: age)
    }

    private static let chain = [CNAMERecord(alias: "chain.example.test", target: "alias.example.test", ttl: 30),
                                CNAMERecord(alias: "alias.example.test", target: "www.example.test", ttl: 5)]

    /// example.test's SOA record as NSD sends it: TTL 3600, MINIMUM 60.
    private static let soa = SOARecord(zone: "example.test", ttl: 3600, primaryServer: "ns.example.test",
                                       mailbox: "hostmaster.example.test", serial: 2024010101, refresh: 3600, retry: 600,
                                       expire: 86400, minimum: 60)

    private static func negative(_ kind: NegativeAnswer.Kind, cnames: [CNAMERecord] = [], soa: SOARecord? = soa,
                                 age: UInt32) throws -> ResolutionOutcome {
        let answer = NegativeAnswer(name: try HostName.parse("chain.example.test"), family: .v6, kind: kind, cnames: cnames, soa: soa,
                                    upstream: Upstream("127.0.0.1:53"), source: .negativeCache, receivedAt: received)
        return ResolutionOutcome(answer: .negative(answer), ttlLeft: answer.ttl > age ? answer.ttl - age : 0, age: age)
    }

    @Test func theCNAMEChainComesFirstWithTheQuestionAsFirstOwner() throws {
        let resolution = try Self.resolution(cnames: Self.chain, addresses: [("127.0.0.10", 3600)])
        let answer = DNSAnswer(Self.outcome(resolution, age: 0), limits: ResolutionCache.Limits())
        #expect(answer == DNSAnswer(rcode: .noerror, records: [
            DNSRecord(owner: .question, ttl: 30, data: .canonicalName("alias.example.test")),
            DNSRecord(owner: .name("alias.example.test"), ttl: 5, data: .canonicalName("www.example.test")),
            DNSRecord(owner: .name("www.example.test"), ttl: 3600, data: .address(IPAddress("127.0.0.10")!)),
        ]))
    }

    @Test func ttlsAreCountedDownByTheAnswersAge() throws {
        let resolution = try Self.resolution(addresses: [("127.0.0.10", 3600), ("127.0.0.11", 2)])
        #expect(DNSAnswer(Self.outcome(resolution, age: 1), limits: ResolutionCache.Limits()).records.map(\.ttl) == [3599, 1])
        #expect(DNSAnswer(Self.outcome(resolution, age: 3), limits: ResolutionCache.Limits()).records.map(\.ttl) == [3597, 0])
    }

    @Test func ttlsStayUnderTheCachesCeiling() throws {
        let resolution = try Self.resolution(addresses: [("127.0.0.10", 100_000), ("127.0.0.11", 1), ("127.0.0.12", 0)])
        let answer = DNSAnswer(Self.outcome(resolution, age: 10), limits: ResolutionCache.Limits(minimumTTL: 30, maximumTTL: 3600))
        // The cache keeps the second address 30 s, but a client need not: its own TTL is what it says.
        #expect(answer.records.map(\.ttl) == [3590, 0, 0])
    }

    @Test func aStaleAnswerCarriesTheStaleTTL() throws {
        // As the cache serves it: every record's TTL the stale TTL, age 0.
        let resolution = Resolution(name: try HostName.parse("www.example.test"),
                                    addresses: [ResolvedAddress(address: IPAddress("127.0.0.10")!, ttl: 30)], cnames: [],
                                    upstream: Upstream("127.0.0.1:53"), source: .stale, receivedAt: Self.received)
        let stale = ResolutionOutcome(answer: .addresses(resolution), ttlLeft: 30, age: 0)
        #expect(DNSAnswer(stale, limits: ResolutionCache.Limits()).records.map(\.ttl) == [30])
    }

    @Test func nxdomainCarriesTheZonesSOAWithTheNegativeTTL() throws {
        let answer = DNSAnswer(try Self.negative(.nxdomain, age: 0), limits: ResolutionCache.Limits())
        #expect(answer == DNSAnswer(rcode: .nxdomain, authority: [
            DNSRecord(owner: .name("example.test"), ttl: 60, data: .startOfAuthority(Self.soa)),
        ]))
        let later = DNSAnswer(try Self.negative(.nxdomain, age: 45), limits: ResolutionCache.Limits())
        #expect(later.authority.map(\.ttl) == [15])
        let expired = DNSAnswer(try Self.negative(.nxdomain, age: 61), limits: ResolutionCache.Limits())
        #expect(expired.authority.map(\.ttl) == [0])
    }

    @Test func nodataThroughAnAliasCarriesTheChainAndTheSOA() throws {
        let answer = DNSAnswer(try Self.negative(.nodata, cnames: Self.chain, age: 2), limits: ResolutionCache.Limits())
        #expect(answer == DNSAnswer(rcode: .noerror, records: [
            DNSRecord(owner: .question, ttl: 28, data: .canonicalName("alias.example.test")),
            DNSRecord(owner: .name("alias.example.test"), ttl: 3, data: .canonicalName("www.example.test")),
        ], authority: [
            DNSRecord(owner: .name("example.test"), ttl: 58, data: .startOfAuthority(Self.soa)),
        ]))
    }

    @Test func aNegativeAnswerWithoutSOAHasNoAuthority() throws {
        let answer = DNSAnswer(try Self.negative(.nodata, soa: nil, age: 0), limits: ResolutionCache.Limits())
        #expect(answer == .nodata)
    }

    @Test func failuresMapToTheirRCODE() throws {
        let name = try HostName.parse("nx.example.test")
        #expect(DNSAnswer(ResolutionError.nxdomain(name)) == .nxdomain)
        #expect(DNSAnswer(ResolutionError.nodata(name, .v6)) == .nodata)
        #expect(DNSAnswer(ResolutionError.upstreamsFailed([])) == .servfail)
        #expect(DNSAnswer(ResolutionError.timeout(budget: .seconds(5), [])) == .servfail)
        #expect(DNSAnswer(ResolutionError.cancelled) == nil)
    }
}
