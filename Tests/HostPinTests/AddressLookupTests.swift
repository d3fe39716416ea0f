@testable import HostPin
import HostPinTestSupport
import Testing

/// One upstream asked through the plain transport (``AresChannel``), its replies read from the message:
/// what the lab's NSD says about names that do not exist or lack a family, SOA included (RFC 2308 §3).
@Suite struct AddressLookupTests {
    let lab: Lab
    let channel: any UpstreamTransport

    init() throws {
        lab = try Lab.current()
        channel = try lab.trustedDNS.makeTransport(timeout: .seconds(1), tries: 2, useTCP: false)
    }

    /// The zone's SOA as NSD sends it in negative answers, every field as in the zone file: TTL 60, the
    /// smaller of its TTL (3600) and MINIMUM.
    static let zoneSOA = SOARecord(zone: "example.test", ttl: 60, primaryServer: "ns.example.test",
                                   mailbox: "hostmaster.example.test", serial: 2024010101, refresh: 3600, retry: 600,
                                   expire: 86400, minimum: 60)

    @Test(arguments: [AddressFamily.v4, .v6, .any])
    func nxdomainCarriesTheZonesSOA(family: AddressFamily) async throws {
        let answer = await AddressLookup.ask(channel, for: try HostName.parse("nx.example.test"), family: family,
                                             deadline: nil)
        #expect(answer == .nxdomain(soa: Self.zoneSOA))
    }

    @Test func nodataAfterACNAMECarriesTheZonesSOA() async throws {
        let answer = await AddressLookup.ask(channel, for: try HostName.parse("alias.example.test"), family: .v6,
                                             deadline: nil)
        #expect(answer == .nodata(soa: Self.zoneSOA,
                                  cnames: [CNAMERecord(alias: "alias.example.test", target: "www.example.test", ttl: 5)]))
    }

    @Test func addressesComeWithTheirChain() async throws {
        let answer = await AddressLookup.ask(channel, for: try HostName.parse("alias.example.test"), family: .any,
                                             deadline: nil)
        #expect(answer == .addresses([ResolvedAddress(address: IPAddress("127.0.0.10")!, ttl: 3600)],
                                     cnames: [CNAMERecord(alias: "alias.example.test", target: "www.example.test", ttl: 5)]))
    }
}
