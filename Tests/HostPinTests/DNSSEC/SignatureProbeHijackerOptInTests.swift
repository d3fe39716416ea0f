import HostPin
import HostPinTestSupport
import Testing

/// ``SignatureProbe`` and ``HijackDetector``'s `bad-signature` / `no-signatures` reasons against the lab:
/// the trusted side is the lab's signed NSD validating from the lab root (`Configuration.lab`); the local
/// side is a `scripts/fault-dns` of the test's own in `forge-a` mode — it relays the NSD's signed answer
/// with the A record pointed at 127.0.0.66 and the RRSIG kept, as a rewriting resolver that cannot sign
/// would — or the lab's dnsmasq hijacker, whose 127.0.0.66 carries no RRSIG at all (hence the
/// `HijackerOptIn` name: it queries the hijacker). Loopback counts as ordinary here, so that only the
/// signatures decide.
@Suite struct SignatureProbeHijackerOptInTests {
    let lab: Lab

    init() throws {
        lab = try Lab.current()
    }

    private var detector: HijackDetector { HijackDetector(ordinary: [IPAddressRange("127.0.0.0/8")!]) }

    @Test func aForgedAddressUnderTheOriginalSignatureIsHijacked() async throws {
        let forger = try await FaultServer(mode: .forgeA, upstream: lab.trustedDNS)
        defer { forger.stop() }
        let trusted = try TrustedResolver(configuration: .lab([lab.trustedDNS]))
        let local = try UntrustedResolver(server: forger.address)
        let name = try HostName.parse("www.example.test")
        let truth = try await trusted.resolve(name, family: .v4)
        #expect(truth.dnssec == .secure)
        let claim = try await local.resolve(name, family: .v4)
        #expect(claim.ipAddresses.map(\.description) == ["127.0.0.66"])

        let probe = try #require(await SignatureProbe.run(name, family: .v4, trusted: trusted, local: local))
        guard case .badSignatures(let reason) = probe.finding else {
            Issue.record("expected bad signatures, got \(probe.finding)")
            return
        }
        #expect(reason.rrset == "www.example.test. A")
        #expect(reason.problem.description.hasPrefix("signature does not verify"))

        let verdict = detector.verdict(trusted: .addresses(truth), local: .success(claim), signatures: probe)
        #expect(verdict.description == "hijacked")
        #expect(verdict.reasons.map(\.code) == [.badSignature])
        // The probe's own validator: the trusted resolution is not marked bogus by the forgery.
        #expect(try await trusted.resolve(name, family: .v4).dnssec == .secure)
    }

    @Test func theHijackersUnsignedAnswerIsOnlyInconclusive() async throws {
        let trusted = try TrustedResolver(configuration: .lab([lab.trustedDNS]))
        let local = try UntrustedResolver(server: lab.hijackDNS)
        let name = try HostName.parse("www.example.test")
        let truth = try await trusted.resolve(name, family: .v4)
        let claim = try await local.resolve(name, family: .v4)
        #expect(claim.ipAddresses.map(\.description) == ["127.0.0.66"])

        let probe = try #require(await SignatureProbe.run(name, family: .v4, trusted: trusted, local: local))
        #expect(probe.finding == .unsigned)
        let verdict = detector.verdict(trusted: .addresses(truth), local: .success(claim), signatures: probe)
        #expect(verdict.description == "inconclusive")
        #expect(verdict.reasons.map(\.code) == [.disjoint, .noSignatures])
    }

    @Test func anHonestRelayValidates() async throws {
        let relay = try await FaultServer(mode: .answer, upstream: lab.trustedDNS)
        defer { relay.stop() }
        let trusted = try TrustedResolver(configuration: .lab([lab.trustedDNS]))
        let local = try UntrustedResolver(server: relay.address)
        let probe = try #require(await SignatureProbe.run(try HostName.parse("www.example.test"), family: .any,
                                                          trusted: trusted, local: local))
        #expect(probe.finding == .valid(.secure))
    }

    @Test func noProbeWithoutValidation() async throws {
        let trusted = try TrustedResolver(configuration: .ownServer([lab.trustedDNS]))
        let local = try UntrustedResolver(server: lab.trustedDNS)
        #expect(await SignatureProbe.run(try HostName.parse("www.example.test"), family: .v4, trusted: trusted,
                                         local: local) == nil)
    }
}
