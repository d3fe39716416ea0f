import HostPin
import Testing

/// NXDOMAIN and NODATA under NSEC, fed from the signed lab's zone files: verdicts equal delv's for the
/// NSEC rows of zones/signed/README.md (the NSEC3 rows, nx.test and www.test TXT, wait for NSEC3).
@Suite struct DNSSECDenialTests {
    private func verdict(_ name: String, type: UInt16, claim: AnswerValidation.Claim,
                         editing edit: ([DNSSECRecord]) -> [DNSSECRecord] = { $0 }) throws -> DNSSECVerdict? {
        let (lab, anchors) = try LabZones.current()
        let owner = try #require(WireName(name))
        var validation = AnswerValidation(name: owner, type: type, answer: [], authority: edit(lab.negativeAuthority(owner)),
                                          claim: claim, anchors: anchors, now: nowSeconds())
        return lab.run(&validation).verdict
    }

    @Test func nxdomainUnderNSECIsSecure() throws {
        #expect(try verdict("nx.example.test", type: DNSSECRecord.Kind.a, claim: .nxdomain)?.kind == "secure")
    }

    @Test func nodataUnderNSECIsSecure() throws {
        #expect(try verdict("www.example.test", type: DNSSECRecord.Kind.txt, claim: .nodata)?.kind == "secure")
    }

    @Test func nodataForATypeTheNSECListsIsBogus() throws {
        guard case .bogus(let reason)? = try verdict("www.example.test", type: DNSSECRecord.Kind.a, claim: .nodata) else {
            Issue.record("not bogus"); return
        }
        #expect(reason.problem == .denialMissing)
    }

    @Test func nxdomainForANameThatExistsIsBogus() throws {
        #expect(try verdict("www.example.test", type: DNSSECRecord.Kind.a, claim: .nxdomain)?.kind == "bogus")
    }

    @Test func nxdomainWithoutTheWildcardProofIsBogus() throws {
        // Only the NSEC covering the name, none for the wildcard at its closest encloser.
        let verdict = try verdict("nx.example.test", type: DNSSECRecord.Kind.a, claim: .nxdomain) { records in
            let name = WireName("nx.example.test")!
            let cover = records.first { $0.type == DNSSECRecord.Kind.nsec && NSECRecord.covers($0, name) }
            return records.filter { $0.type == DNSSECRecord.Kind.soa || $0.typeCovered == DNSSECRecord.Kind.soa || $0.owner == cover?.owner }
        }
        // The NSEC covering nx.example.test may cover *.example.test too; then the proof stands.
        let (lab, _) = try LabZones.current()
        let wildcard = try #require(WireName("*.example.test")), name = try #require(WireName("nx.example.test"))
        let coverAlsoProvesWildcard = lab.negativeAuthority(name).contains { NSECRecord.covers($0, name) && NSECRecord.covers($0, wildcard) }
        #expect(verdict?.kind == (coverAlsoProvesWildcard ? "secure" : "bogus"))
    }

    @Test func negativeAnswerWithStrippedSignaturesIsBogus() throws {
        let verdict = try verdict("nx.example.test", type: DNSSECRecord.Kind.a, claim: .nxdomain) { records in
            records.filter { $0.type != DNSSECRecord.Kind.rrsig }
        }
        #expect(verdict?.kind == "bogus")
    }

    @Test func negativeAnswerWithoutNSECIsBogus() throws {
        let verdict = try verdict("nx.example.test", type: DNSSECRecord.Kind.a, claim: .nxdomain) { records in
            records.filter { $0.type != DNSSECRecord.Kind.nsec && $0.typeCovered != DNSSECRecord.Kind.nsec }
        }
        guard case .bogus(let reason)? = verdict else { Issue.record("not bogus"); return }
        #expect(reason.problem == .denialMissing)
    }

    @Test func nxdomainBelowAnUnsignedDelegationIsInsecure() throws {
        // unsigned.example.test's own SOA is unsigned: insecure through the parent's NSEC.
        #expect(try verdict("nx.unsigned.example.test", type: DNSSECRecord.Kind.a, claim: .nxdomain)?.kind == "insecure")
    }
}
