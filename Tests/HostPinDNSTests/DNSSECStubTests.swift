import Foundation
import HostPin
import HostPinNet
import HostPinTestSupport
@testable import HostPinDNS
import Testing

/// The stub's DNSSEC (RFC 4035 §3.2, RFC 6840 §5.7–5.9, RFC 8914), against the signed lab NSD
/// (LAB_SIGNED_DNS) with the lab's trust anchor, through real UDP clients: AD only on secure answers to
/// queries with AD or DO; RRSIGs and NSEC/NSEC3 only for DO; CD answered without validating; bogus
/// answered SERVFAIL with an Extended DNS Error; delv behind the stub fully validates.
@Suite struct DNSSECStubTests {
    let signed: Upstream
    let anchors: TrustAnchors
    let anchorPath: String

    init() throws {
        let world = try Lab.current().signedWorld()
        (signed, anchorPath, anchors) = (world.server, world.anchorPath, world.anchors)
    }

    /// A started stub resolving and forwarding through `upstream` (the signed NSD by default) in `mode`.
    func stub(_ mode: DNSSECMode = .validate, upstream: Upstream? = nil) throws -> (DNSServer, SocketAddress, DNSResponder) {
        var configuration = TrustedResolver.Configuration(upstreams: [upstream ?? signed])
        // A loaded machine: these tests check answers, not time. A chain query that times out makes the
        // answer bogus (held 60 s), so each try gets 5 s too.
        configuration.budget = .seconds(20)
        configuration.timeout = .seconds(5)
        configuration.dnssec = DNSSECConfiguration(mode: mode, trustAnchors: anchors)
        let trusted = try TrustedResolver(configuration: configuration)
        let responder = DNSResponder(resolver: CachingResolver(upstream: trusted), forwarder: trusted)
        let (server, address) = try StubLab.server(responder: responder)
        return (server, address, responder)
    }

    static func ask(_ address: SocketAddress, _ name: String, type: UInt16 = 1, udpSize: UInt16? = 1232, dnssecOK: Bool = false,
                    authenticData: Bool = false, checkingDisabled: Bool = false) async throws -> TestResponse {
        let query = TestMessage.query(name, type: type, id: .random(in: 0 ... .max), udpSize: udpSize,
                                      checkingDisabled: checkingDisabled, dnssecOK: dnssecOK, authenticData: authenticData)
        return try #require(TestResponse(try await DNSClient.udp(query, to: address)))
    }

    static let rrsig: UInt16 = 46, nsec: UInt16 = 47, nsec3: UInt16 = 50
    static func dnssecRecords(_ response: TestResponse) -> [TestResponse.Record] {
        (response.answers + response.authority).filter { [rrsig, nsec, nsec3].contains($0.type) }
    }

    @Test func secureAddressHasADOnlyForAQueryWithADOrDO() async throws {
        let (server, address, _) = try stub()
        defer { Task { await server.stop() } }
        let plain = try await Self.ask(address, "www.example.test")
        #expect(plain.data(ofType: 1) == ["127.0.0.10"])
        #expect(!plain.authenticData)
        let ad = try await Self.ask(address, "www.example.test", authenticData: true)
        #expect(ad.data(ofType: 1) == ["127.0.0.10"])
        #expect(ad.authenticData)
        #expect(Self.dnssecRecords(ad).isEmpty, "no DO, no RRSIG: \(ad)")
        let withDO = try await Self.ask(address, "www.example.test", dnssecOK: true)
        #expect(withDO.data(ofType: 1) == ["127.0.0.10"])
        #expect(withDO.authenticData)
        #expect(withDO.dnssecOK, "DO echoed (RFC 3225 §3)")
        #expect(withDO.answers.contains { $0.type == Self.rrsig && $0.data.hasPrefix("A 13 ") }, "\(withDO)")
        // Without EDNS nor AD: none.
        #expect(try await !Self.ask(address, "www.example.test", udpSize: nil).authenticData)
    }

    @Test func insecureAndOffAnswersNeverHaveAD() async throws {
        let (server, address, _) = try stub()
        defer { Task { await server.stop() } }
        let insecure = try await Self.ask(address, "www.unsigned.example.test", dnssecOK: true, authenticData: true)
        #expect(insecure.rcode == 0)
        #expect(!insecure.data(ofType: 1).isEmpty, "\(insecure)")
        #expect(!insecure.authenticData)
        let (offServer, offAddress, _) = try stub(.off)
        defer { Task { await offServer.stop() } }
        for dnssecOK in [false, true] {
            let off = try await Self.ask(offAddress, "www.example.test", dnssecOK: dnssecOK, authenticData: true)
            #expect(off.data(ofType: 1) == ["127.0.0.10"])
            #expect(!off.authenticData)
        }
    }

    /// With validation on, every query upstream carries DO, so the forwarded reply holds RRSIGs and the
    /// NSEC proof: a client without DO must not get them (RFC 4035 §3.2.1), one with DO must.
    @Test func forwardedRepliesKeepDNSSECRecordsOnlyForDO() async throws {
        let (server, address, _) = try stub()
        defer { Task { await server.stop() } }
        // Asked twice each: the second comes from the forward cache.
        for _ in 0..<2 {
            let plain = try await Self.ask(address, "info.example.test", type: 16, authenticData: true)
            #expect(plain.answers.map(\.type) == [16], "\(plain)")
            #expect(Self.dnssecRecords(plain).isEmpty, "\(plain)")
            #expect(plain.authenticData)
            let withDO = try await Self.ask(address, "info.example.test", type: 16, dnssecOK: true)
            #expect(withDO.answers.contains { $0.type == Self.rrsig }, "\(withDO)")
            #expect(withDO.authenticData)
            // NODATA under NSEC: the SOA alone without DO; the NSEC and the RRSIGs with it.
            let nodata = try await Self.ask(address, "www.example.test", type: 16)
            #expect(nodata.rcode == 0 && nodata.answers.isEmpty)
            #expect(nodata.authority.map(\.type) == [6], "\(nodata)")
            let signedNodata = try await Self.ask(address, "www.example.test", type: 16, dnssecOK: true)
            #expect(signedNodata.authority.contains { $0.type == Self.nsec }, "\(signedNodata)")
            #expect(signedNodata.authority.contains { $0.type == Self.rrsig }, "\(signedNodata)")
            #expect(signedNodata.authenticData)
        }
        // NXDOMAIN under NSEC3, and a query for the RRSIGs themselves (asked explicitly: kept).
        let nx = try await Self.ask(address, "nx.test")
        #expect(nx.rcode == 3)
        #expect(Self.dnssecRecords(nx).isEmpty, "\(nx)")
        let signedNX = try await Self.ask(address, "nx.test", dnssecOK: true)
        #expect(signedNX.rcode == 3 && signedNX.authenticData)
        #expect(signedNX.authority.filter { $0.type == Self.nsec3 }.count >= 2, "\(signedNX)")
        let rrsigs = try await Self.ask(address, "www.example.test", type: Self.rrsig)
        #expect(rrsigs.answers.contains { $0.type == Self.rrsig }, "\(rrsigs)")
    }

    @Test(arguments: [("modified.example.test", ExtendedDNSError.dnssecBogus),
                      ("www.expired.example.test", ExtendedDNSError.signatureExpired),
                      ("www.badds.example.test", ExtendedDNSError.dnskeyMissing)])
    func bogusIsServfailWithItsExtendedError(_ name: String, _ code: UInt16) async throws {
        let (server, address, _) = try stub()
        defer { Task { await server.stop() } }
        for dnssecOK in [false, true] {
            let response = try await Self.ask(address, name, dnssecOK: dnssecOK)
            #expect(response.rcode == 2, "\(response)")
            #expect(response.answers.isEmpty)
            let error = try #require(response.extendedError, "\(response.ednsOptions)")
            #expect(error.code == code, "\(error.text)")
            #expect(error.text.contains(".example.test"), "\(error.text)")
        }
        // A forwarded type too, where the whole zone is bogus (modified.example.test's TXT NODATA is secure:
        // only its A record was changed after signing).
        if name != "modified.example.test" {
            let txt = try await Self.ask(address, name, type: 16)
            #expect(txt.rcode == 2)
            #expect(txt.extendedError?.code == code)
        }
        // Without EDNS: SERVFAIL with no OPT record to carry it (RFC 8914 §3).
        let plain = try await Self.ask(address, name, udpSize: nil)
        #expect(plain.rcode == 2)
        #expect(plain.udpSize == nil && plain.ednsOptions.isEmpty)
    }

    @Test func reportModeHandsOutBogusWithoutAD() async throws {
        let (server, address, _) = try stub(.report)
        defer { Task { await server.stop() } }
        for dnssecOK in [false, true] {
            let response = try await Self.ask(address, "modified.example.test", dnssecOK: dnssecOK, authenticData: true)
            #expect(response.data(ofType: 1) == ["127.0.0.66"], "\(response)")
            #expect(!response.authenticData)
            #expect(response.extendedError == nil)
        }
    }

    /// CD (RFC 4035 §3.2.2): the client validates, the stub does not — the forged record comes back with
    /// its signatures and no AD — and that unvalidated reply never answers a query without CD.
    @Test func checkingDisabledIsAnsweredWithoutValidating() async throws {
        let (server, address, _) = try stub()
        defer { Task { await server.stop() } }
        let cd = try await Self.ask(address, "modified.example.test", dnssecOK: true, checkingDisabled: true)
        #expect(cd.rcode == 0)
        #expect(cd.data(ofType: 1) == ["127.0.0.66"], "\(cd)")
        #expect(cd.checkingDisabled && !cd.authenticData)
        #expect(cd.answers.contains { $0.type == Self.rrsig }, "\(cd)")
        let cdPlain = try await Self.ask(address, "modified.example.test", checkingDisabled: true)
        #expect(cdPlain.data(ofType: 1) == ["127.0.0.66"])
        #expect(Self.dnssecRecords(cdPlain).isEmpty)
        for dnssecOK in [false, true] {
            #expect(try await Self.ask(address, "modified.example.test", dnssecOK: dnssecOK).rcode == 2)
        }
        // A secure name asked with CD: not validated, so no AD even with AD set.
        let secure = try await Self.ask(address, "www.example.test", authenticData: true, checkingDisabled: true)
        #expect(secure.data(ofType: 1) == ["127.0.0.10"])
        #expect(!secure.authenticData)
    }

    /// The validating client of reference behind the stub: delv (BIND 9) with the lab's anchor gets
    /// every RRset of the chain through the stub and calls its answers what it calls them at the NSD.
    @Test(arguments: [("www.example.test", "A", "; fully validated"), ("x.wild.test", "A", "; fully validated"),
                      ("nx.test", "A", "; negative response, fully validated"),
                      ("www.example.test", "TXT", "; negative response, fully validated"),
                      ("www.unsigned.example.test", "A", "; unsigned answer")])
    func delvBehindTheStubValidates(_ name: String, _ type: String, _ verdict: String) async throws {
        let (server, address, _) = try stub()
        defer { Task { await server.stop() } }
        let output = try await delv(address, name, type)
        #expect(output.contains(verdict), "\(output)")
    }

    @Test func delvBehindTheStubGetsNoBogusAnswer() async throws {
        let (server, address, _) = try stub()
        defer { Task { await server.stop() } }
        let output = try await delv(address, "modified.example.test", "A")
        // The stub's SERVFAIL, not a fetch delv gave up on (`;; shut down hung fetch`, `operation canceled`).
        #expect(output.contains("resolution failed: failure"), "\(output)")
        #expect(!output.contains("hung fetch"), "\(output)")
        #expect(!output.contains("127.0.0.66"), "\(output)")
    }

    func delv(_ address: SocketAddress, _ name: String, _ type: String) async throws -> String {
        let delvConf = URL(fileURLWithPath: anchorPath).deletingLastPathComponent().appendingPathComponent("delv.conf").path
        let result = try await ProcessRunner.run("/usr/bin/delv", [
            "@127.0.0.1", "-p", String(address.port), "-a", delvConf, "+root=.", name, type,
        ])
        return result.standardOutput + result.standardError
    }

    /// 500 parallel DO queries, 50 names ten times each, through an upstream 100 ms away: every one is
    /// answered secure with its NSEC proof, the upstream sees each name's question once (single-flight:
    /// not ten times) plus at most the five chain queries of its validation (`.` DNSKEY, `test.` DS and
    /// DNSKEY, `example.test.` DS and DNSKEY: cold validations running at once do not share them), and no
    /// flight is left.
    @Test func fiveHundredParallelDOQueriesThroughASlowUpstream() async throws {
        let relay = try DelayingRelay(target: signed, delay: .milliseconds(100))
        defer { relay.stop() }
        let (server, address, responder) = try stub(upstream: relay.address)
        defer { Task { await server.stop() } }
        let start = ContinuousClock.now
        let responses = try await withThrowingTaskGroup(of: TestResponse.self) { group in
            for index in 0..<500 {
                group.addTask { try await Self.ask(address, "n\(index % 50).example.test", dnssecOK: true) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let elapsed = ContinuousClock.now - start
        #expect(responses.count == 500)
        let wrong = responses.filter { !($0.rcode == 3 && $0.authenticData) }
        #expect(wrong.isEmpty, "\(wrong.count) wrong, first: \(wrong.first.map { "\($0) EDE \(String(describing: $0.extendedError))" } ?? "")")
        #expect(responses.allSatisfy { $0.authority.contains { $0.type == Self.nsec } })
        #expect(relay.received <= 50 * 6, "\(relay.received) upstream queries")
        // A client that retransmitted (its first reply slow on a loaded machine) may have started a flight
        // after the first ones ended, still at the relay's 100 ms: every flight ends, within 5 s.
        let drained = ContinuousClock.now + .seconds(5)
        while responder.forwardFlights.count > 0, ContinuousClock.now < drained { try await Task.sleep(for: .milliseconds(20)) }
        #expect(responder.forwardFlights.count == 0)
        print("DNSSECStubTests: 500 DO queries, 50 names, 100 ms upstream: \(elapsed), \(relay.received) upstream queries")
    }
}
