import Foundation
import HostPin
import HostPinNet
import HostPinTestSupport
@testable import HostPinDNS
import Testing

/// The bad-input catalogue's NSEC3 with 10 000 iterations (issue 28), through the stub: a zone `iter.test`
/// signed here by `ldns-signzone -n -t 10000` (NSEC3, 10 000 iterations) and served by an NSD of the test's
/// own, anchored by its own key-signing key's DS (so it validates: the zone answers DS and DNSKEY itself).
/// Its denials are insecure (RFC 9276 §3.2: above 150 iterations HostPin does not hash), and the stub says
/// why with Extended DNS Error 27, Unsupported NSEC3 Iterations Value (RFC 8914 §4.28), on the answer itself
/// — NXDOMAIN or NODATA, no AD —, from the cache too; a secure answer of the same zone carries none.
@Suite struct DNSSECStubIterationsTests {
    /// The zone signed with NSEC3 `iterations`, and its trust anchor (the KSK's DS line).
    static func signedZone(iterations: Int) throws -> (zone: String, anchor: String) {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("hostpin-iter-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let zone = """
            $ORIGIN iter.test.
            $TTL 60
            @ IN SOA ns.iter.test. hostmaster.iter.test. 1 3600 600 86400 60
            @ IN NS ns.iter.test.
            ns IN A 127.0.0.1
            www IN A 127.0.0.10

            """
        try zone.write(toFile: directory + "/iter.test.zone", atomically: true, encoding: .utf8)
        let script = """
            set -e
            cd "$1"
            key=$(ldns-keygen -a ECDSAP256SHA256 -k iter.test)
            cat "$key.key" >>iter.test.zone
            ldns-signzone -n -t "$2" -s abcd iter.test.zone "$key" 2>/dev/null
            ldns-key2ds -n -2 "$key.key"
            """
        let run = try ProcessRunner.run("/bin/sh", ["-c", script, "sh", directory, String(iterations)])
        try #require(run.status == 0, "\(run.standardError)")
        let signed = try String(contentsOfFile: directory + "/iter.test.zone.signed", encoding: .utf8)
        return (signed, run.standardOutput)
    }

    @Test func tenThousandIterationsIsInsecureWithExtendedError27() async throws {
        let (zone, anchor) = try Self.signedZone(iterations: 10_000)
        #expect(zone.contains("NSEC3PARAM\t1 0 10000 abcd"), "\(zone.prefix(400))")
        let nsd = try await AuthoritativeServer(zones: [.init(name: "iter.test", text: zone)], readinessName: "www.iter.test")
        defer { Task { await nsd.stop() } }
        var configuration = TrustedResolver.Configuration(upstreams: [nsd.address])
        configuration.budget = .seconds(20)
        configuration.timeout = .seconds(5)
        let ds = try #require(DNSSECRecord(presentation: anchor.trimmingCharacters(in: .whitespacesAndNewlines)))
        configuration.dnssec = DNSSECConfiguration(mode: .validate, trustAnchors: TrustAnchors(records: [ds]))
        let trusted = try TrustedResolver(configuration: configuration)
        let responder = DNSResponder(resolver: CachingResolver(upstream: trusted), forwarder: trusted)
        let (server, address) = try StubLab.server(responder: responder)
        defer { Task { await server.stop() } }

        // Asked twice: the second answer comes from the cache, which keeps why.
        for _ in 0..<2 {
            let nx = try await DNSSECStubTests.ask(address, "nx.iter.test", authenticData: true)
            #expect(nx.rcode == 3, "\(nx)")
            #expect(!nx.authenticData)
            let error = try #require(nx.extendedError, "\(nx.ednsOptions)")
            #expect(error.code == 27)
            #expect(error.text.contains("150"), "\(error.text)")
            let nodata = try await DNSSECStubTests.ask(address, "www.iter.test", type: 28, dnssecOK: true)
            #expect(nodata.rcode == 0 && nodata.answers.filter { $0.type == 28 }.isEmpty, "\(nodata)")
            #expect(!nodata.authenticData)
            #expect(nodata.extendedError?.code == 27, "\(nodata.ednsOptions)")
        }
        // The zone's own signed address is secure: AD, no Extended DNS Error.
        let secure = try await DNSSECStubTests.ask(address, "www.iter.test", authenticData: true)
        #expect(secure.data(ofType: 1) == ["127.0.0.10"])
        #expect(secure.authenticData)
        #expect(secure.extendedError == nil)
    }
}
