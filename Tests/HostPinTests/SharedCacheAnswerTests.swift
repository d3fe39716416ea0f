import Foundation
@testable import HostPin
import Testing

/// An answer written as the shared cache stores it (one DNS message by ldns) and read back as a reader
/// gets it: the same records, TTLs counted down by the answer's age, source `sharedCache`.
@Suite struct SharedCacheAnswerTests {
    static let received = Date(timeIntervalSince1970: 1_800_000_000)

    static func roundTrip(_ answer: ResolutionOutcome.Answer, name: HostName, family: AddressFamily, age: UInt32)
        throws -> ResolutionOutcome.Answer?
    {
        let wire = try #require(SharedCacheAnswer.wire(of: answer, family: family))
        return SharedCacheAnswer.answer(from: wire, name: name, family: family, age: age, receivedAt: received,
                                        dnssec: .secure)
    }

    @Test func addressesOfBothFamiliesBehindACNAMEChainComeBackAged() throws {
        let name = try HostName.parse("alias.example.test")
        let resolution = Resolution(
            name: name,
            addresses: [ResolvedAddress(address: IPAddress("127.0.0.10")!, ttl: 3600),
                        ResolvedAddress(address: IPAddress("::1")!, ttl: 300)],
            cnames: [CNAMERecord(alias: "alias.example.test", target: "www.example.test", ttl: 5)],
            upstream: Upstream("127.0.0.1:53"), source: .upstream, receivedAt: Self.received, dnssec: .secure)
        let back = try Self.roundTrip(.addresses(resolution), name: name, family: .any, age: 2)
        let expected = Resolution(
            name: name,
            addresses: [ResolvedAddress(address: IPAddress("127.0.0.10")!, ttl: 3598),
                        ResolvedAddress(address: IPAddress("::1")!, ttl: 298)],
            cnames: [CNAMERecord(alias: "alias.example.test", target: "www.example.test", ttl: 3)],
            upstream: nil, source: .sharedCache, receivedAt: Self.received, dnssec: .secure)
        #expect(back == .addresses(expected))
        // Older than the chain's shortest TTL: no answer.
        #expect(try Self.roundTrip(.addresses(resolution), name: name, family: .any, age: 5) == nil)
    }

    @Test func nxdomainAndNodataKeepTheirSOA() throws {
        let name = try HostName.parse("nx.example.test")
        let soa = SOARecord(zone: "example.test", ttl: 3600, primaryServer: "ns.example.test",
                            mailbox: "hostmaster.example.test", serial: 7, refresh: 3600, retry: 600, expire: 86400,
                            minimum: 60)
        for (kind, family) in [(NegativeAnswer.Kind.nxdomain, AddressFamily.any), (.nodata, .v6)] {
            let negative = NegativeAnswer(name: name, family: family, kind: kind, cnames: [], soa: soa,
                                          upstream: Upstream("127.0.0.1:53"), source: .upstream, receivedAt: Self.received)
            let back = try Self.roundTrip(.negative(negative), name: name, family: family, age: 10)
            guard case .negative(let read)? = back else {
                Issue.record("\(kind): \(String(describing: back))")
                continue
            }
            #expect(read.kind == kind)
            #expect(read.source == .sharedCache)
            #expect(read.ttl == 50)
            #expect(read.soa?.zone == "example.test" && read.soa?.serial == 7 && read.soa?.minimum == 60)
        }
    }

    @Test func aMessageForAnotherNameIsNoAnswer() throws {
        let name = try HostName.parse("www.example.test")
        let resolution = Resolution(name: name, addresses: [ResolvedAddress(address: IPAddress("127.0.0.10")!, ttl: 60)],
                                    cnames: [], upstream: nil, source: .upstream, receivedAt: Self.received)
        let wire = try #require(SharedCacheAnswer.wire(of: .addresses(resolution), family: .v4))
        let other = try HostName.parse("cdn.example.test")
        #expect(SharedCacheAnswer.answer(from: wire, name: other, family: .v4, age: 0, receivedAt: Self.received,
                                         dnssec: nil) == nil)
        #expect(SharedCacheAnswer.answer(from: [0, 1, 2], name: name, family: .v4, age: 0, receivedAt: Self.received,
                                         dnssec: nil) == nil)
    }
}
