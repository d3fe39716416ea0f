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

    @Test func theCNAMEChainComesFirstWithTheQuestionAsFirstOwner() throws {
        let resolution = try Self.resolution(cnames: [CNAMERecord(alias: "chain.example.test", target: "alias.example.test", ttl: 30),
                                                      CNAMERecord(alias: "alias.example.test", target: "www.example.test", ttl: 5)],
                                             addresses: [("127.0.0.10", 3600)])
        let answer = DNSAnswer(resolution, now: Self.received, limits: ResolutionCache.Limits())
        #expect(answer == DNSAnswer(rcode: .noerror, records: [
            DNSRecord(owner: .question, ttl: 30, data: .canonicalName("alias.example.test")),
            DNSRecord(owner: .name("alias.example.test"), ttl: 5, data: .canonicalName("www.example.test")),
            DNSRecord(owner: .name("www.example.test"), ttl: 3600, data: .address(IPAddress("127.0.0.10")!)),
        ]))
    }

    @Test func ttlsAreCountedDownInWholeSeconds() throws {
        let resolution = try Self.resolution(addresses: [("127.0.0.10", 3600), ("127.0.0.11", 2)])
        let later = DNSAnswer(resolution, now: Self.received + 1.9, limits: ResolutionCache.Limits())
        #expect(later.records.map(\.ttl) == [3599, 1])
        let expired = DNSAnswer(resolution, now: Self.received + 2.5, limits: ResolutionCache.Limits())
        #expect(expired.records.map(\.ttl) == [3598, 0])
    }

    @Test func ttlsFollowTheCacheClamps() throws {
        let resolution = try Self.resolution(addresses: [("127.0.0.10", 100_000), ("127.0.0.11", 1), ("127.0.0.12", 0)])
        let answer = DNSAnswer(resolution, now: Self.received + 10, limits: ResolutionCache.Limits(minimumTTL: 30, maximumTTL: 3600))
        #expect(answer.records.map(\.ttl) == [3590, 20, 0])
    }

    @Test func aClockSteppedBackCountsNothing() throws {
        let resolution = try Self.resolution(addresses: [("127.0.0.10", 60)])
        #expect(DNSAnswer(resolution, now: Self.received - 30, limits: ResolutionCache.Limits()).records.map(\.ttl) == [60])
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
