import HostPin
import Testing

/// What a signed NSEC in a DS answer proves (RFC 4035 §5.2, RFC 6840 §4.1), on NSECs signed here.
@Suite struct DNSSECNoDSProofTests {
    private func read(_ types: String, signed: Bool = true) throws -> NoDSProof {
        let key = try TestKey(zone: "bad.test.")
        let now = nowSeconds()
        let nsec = try #require(DNSSECRecord(presentation: "child.bad.test. 60 IN NSEC zz.bad.test. \(types)"))
        let records = [nsec] + (signed ? try key.sign([nsec], inception: now - 3600, expiration: now + 86400) : [])
        var budget = ValidationBudget(checks: 64)
        return NoDSProof.read(RRset.group(records), name: try #require(WireName("child.bad.test")), zone: key.zone,
                              keys: [key.dnskey], now: now, limits: ValidationLimits(), budget: &budget)
    }

    private func readCovering(next: String) throws -> NoDSProof {
        let key = try TestKey(zone: "bad.test.")
        let now = nowSeconds()
        let nsec = try #require(DNSSECRecord(presentation: "a.bad.test. 60 IN NSEC \(next) A RRSIG NSEC"))
        let records = [nsec] + (try key.sign([nsec], inception: now - 3600, expiration: now + 86400))
        var budget = ValidationBudget(checks: 64)
        return NoDSProof.read(RRset.group(records), name: try #require(WireName("child.bad.test")), zone: key.zone,
                              keys: [key.dnskey], now: now, limits: ValidationLimits(), budget: &budget)
    }

    @Test func coveringNSECWhoseNextNameIsBelowProvesAnEmptyNonTerminal() throws {
        #expect(try readCovering(next: "www.child.bad.test.") == .noCut)
    }

    @Test func coveringNSECWhoseNextNameIsNotBelowIsBogus() throws {
        guard case .bogus = try readCovering(next: "zz.bad.test.") else { Issue.record("a name proven absent taken as no cut"); return }
    }

    @Test func nsecWithNSAndNoDSProvesAnUnsignedDelegation() throws {
        #expect(try read("NS RRSIG NSEC") == .insecureDelegation)
    }

    @Test func nsecWithoutNSIsNoZoneCut() throws {
        #expect(try read("A RRSIG NSEC") == .noCut)
    }

    @Test func nsecFromTheChildsApexProvesNothingAboutTheDS() throws {
        guard case .bogus = try read("NS SOA RRSIG NSEC DNSKEY") else { Issue.record("SOA NSEC taken as a proof"); return }
    }

    @Test func nsecListingDSBesideAnEmptyAnswerIsBogus() throws {
        guard case .bogus = try read("NS DS RRSIG NSEC") else { Issue.record("DS NSEC taken as a proof"); return }
    }

    @Test func unsignedNSECIsBogus() throws {
        guard case .bogus(let reason) = try read("NS RRSIG NSEC", signed: false) else { Issue.record("unsigned NSEC taken"); return }
        #expect(reason.problem == .signaturesMissing)
    }
}
