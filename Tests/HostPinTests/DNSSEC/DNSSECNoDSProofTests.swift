import CLDNS
import Foundation
import HostPin
import Testing

/// What a signed NSEC or NSEC3 in a DS answer proves (RFC 4035 §5.2, RFC 5155 §8.6, RFC 6840 §4.1 and
/// §4.4), on records signed here.
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
        #expect(try read("NS RRSIG NSEC") == .insecureDelegation(.nsec))
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

    /// `name`'s NSEC3 hash (SHA-1, no salt, no extra iterations) as its base32hex label, by ldns.
    private func hash(_ name: String) throws -> String {
        let rdf = try #require(ldns_dname_new_frm_str(name))
        defer { ldns_rdf_deep_free(rdf) }
        let hashed = try #require(ldns_nsec3_hash_name(rdf, 1, 0, 0, nil))
        defer { ldns_rdf_deep_free(hashed) }
        let text = try #require(ldns_rdf2str(hashed))
        defer { free(text) }
        return try #require(String(cString: text).split(separator: ".").first.map(String.init))
    }

    /// A DS answer for child.bad.test made of the NSEC3 lines given (`OWNER-HASH FLAGS ITERATIONS NEXT TYPES`),
    /// each signed unless `signed` is false.
    private func readNSEC3(_ lines: [String], signed: Bool = true) throws -> NoDSProof {
        let key = try TestKey(zone: "bad.test.")
        let now = nowSeconds()
        var records: [DNSSECRecord] = []
        for line in lines {
            let fields = line.split(separator: " ", maxSplits: 4).map(String.init)
            let nsec3 = try #require(DNSSECRecord(presentation:
                "\(fields[0]).bad.test. 60 IN NSEC3 1 \(fields[1]) \(fields[2]) - \(fields[3]) \(fields[4])"))
            records += [nsec3] + (signed ? try key.sign([nsec3], inception: now - 3600, expiration: now + 86400) : [])
        }
        var budget = ValidationBudget(checks: 64)
        return NoDSProof.read(RRset.group(records), name: try #require(WireName("child.bad.test")), zone: key.zone,
                              keys: [key.dnskey], now: now, limits: ValidationLimits(), budget: &budget)
    }

    /// The closest encloser proof for child.bad.test: the apex's NSEC3 and one covering every other hash.
    private func optOutProof(flags: Int, iterations: Int = 0) throws -> [String] {
        let apex = try hash("bad.test.")
        // A chain of two: the apex, then a hash just after it whose span wraps round to the apex, covering
        // every other hash (the child's among them).
        let digits = Array("0123456789abcdefghijklmnopqrstuv")
        let last = try #require(apex.last.flatMap { digits.firstIndex(of: $0) })
        try #require(last < digits.count - 1, "bad.test.'s hash ends in v")
        let after = String(apex.dropLast()) + String(digits[last + 1])
        return ["\(apex) 0 \(iterations) \(after) NS SOA RRSIG DNSKEY NSEC3PARAM", "\(after) \(flags) \(iterations) \(apex) A RRSIG"]
    }

    @Test func nsec3MatchingWithNSAndNoDSProvesAnUnsignedDelegation() throws {
        let child = try hash("child.bad.test.")
        #expect(try readNSEC3(["\(child) 0 0 \(child) NS"]) == .insecureDelegation(.nsec3))
    }

    @Test func nsec3MatchingWithoutNSIsNoZoneCut() throws {
        let child = try hash("child.bad.test.")
        #expect(try readNSEC3(["\(child) 0 0 \(child) A RRSIG"]) == .noCut)
    }

    @Test func nsec3MatchingWithSOAOrDSIsBogus() throws {
        let child = try hash("child.bad.test.")
        for types in ["NS SOA RRSIG DNSKEY", "NS DS RRSIG"] {
            guard case .bogus = try readNSEC3(["\(child) 0 0 \(child) \(types)"]) else { Issue.record("\(types) taken as a proof"); return }
        }
    }

    @Test func optOutCoverOfTheDelegationProvesAnUnsignedDelegation() throws {
        #expect(try readNSEC3(try optOutProof(flags: 1)) == .insecureDelegation(.nsec3OptOut))
    }

    @Test func coverWithoutOptOutIsBogus() throws {
        guard case .bogus(let reason) = try readNSEC3(try optOutProof(flags: 0)) else { Issue.record("a plain cover taken"); return }
        #expect(reason.problem == .dsMissingWithoutProof)
    }

    @Test func unsignedNSEC3ProofIsBogus() throws {
        let child = try hash("child.bad.test.")
        guard case .bogus(let reason) = try readNSEC3(["\(child) 0 0 \(child) NS"], signed: false) else {
            Issue.record("unsigned NSEC3 taken"); return
        }
        #expect(reason.problem == .signaturesMissing)
        guard case .bogus = try readNSEC3(try optOutProof(flags: 1), signed: false) else { Issue.record("unsigned opt-out taken"); return }
    }

    @Test func nsec3ProofAboveTheIterationLimitIsInsecure() throws {
        #expect(try readNSEC3(try optOutProof(flags: 1, iterations: 151)) == .iterationsAboveLimit)
    }

    @Test func unsignedNSEC3AboveTheIterationLimitIsBogus() throws {
        // Else a box on the path could make any signed delegation insecure with one made-up record.
        guard case .bogus(let reason) = try readNSEC3(try optOutProof(flags: 1, iterations: 151), signed: false) else {
            Issue.record("an unsigned NSEC3 made the delegation insecure"); return
        }
        #expect(reason.problem == .signaturesMissing)
    }
}
