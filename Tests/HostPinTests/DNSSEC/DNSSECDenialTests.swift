import HostPin
import Testing

/// The verdict on a negative answer for `name` built from the lab's zone files (``LabZones/negativeAuthority(_:)``),
/// its authority records passed through `edit` first.
func labDenialVerdict(_ name: String, type: UInt16, claim: AnswerValidation.Claim,
                      editing edit: ([DNSSECRecord]) -> [DNSSECRecord] = { $0 }) throws -> DNSSECVerdict? {
    let (lab, anchors) = try LabZones.current()
    let owner = try #require(WireName(name))
    var validation = AnswerValidation(name: owner, type: type, answer: [], authority: edit(lab.negativeAuthority(owner, type: type)),
                                      claim: claim, anchors: anchors, now: nowSeconds())
    return lab.run(&validation).verdict
}

/// NXDOMAIN and NODATA under NSEC, fed from the signed lab's zone files: verdicts equal delv's for the
/// NSEC rows of zones/signed/README.md, wildcard NODATA included (the NSEC3 rows: ``DNSSECNSEC3Tests``).
@Suite struct DNSSECDenialTests {
    @Test func nxdomainUnderNSECIsSecure() throws {
        #expect(try labDenialVerdict("nx.example.test", type: DNSSECRecord.Kind.a, claim: .nxdomain)?.kind == "secure")
    }

    @Test func nodataUnderNSECIsSecure() throws {
        #expect(try labDenialVerdict("www.example.test", type: DNSSECRecord.Kind.txt, claim: .nodata)?.kind == "secure")
    }

    @Test func nodataForATypeTheNSECListsIsBogus() throws {
        guard case .bogus(let reason)? = try labDenialVerdict("www.example.test", type: DNSSECRecord.Kind.a, claim: .nodata) else {
            Issue.record("not bogus"); return
        }
        #expect(reason.problem == .denialMissing)
    }

    @Test func nxdomainForANameThatExistsIsBogus() throws {
        #expect(try labDenialVerdict("www.example.test", type: DNSSECRecord.Kind.a, claim: .nxdomain)?.kind == "bogus")
    }

    @Test func nxdomainWithoutTheWildcardProofIsBogus() throws {
        // Only the NSEC covering the name, none for the wildcard at its closest encloser.
        let verdict = try labDenialVerdict("nx.example.test", type: DNSSECRecord.Kind.a, claim: .nxdomain) { records in
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
        let verdict = try labDenialVerdict("nx.example.test", type: DNSSECRecord.Kind.a, claim: .nxdomain) { records in
            records.filter { $0.type != DNSSECRecord.Kind.rrsig }
        }
        #expect(verdict?.kind == "bogus")
    }

    @Test func negativeAnswerWithoutNSECIsBogus() throws {
        let verdict = try labDenialVerdict("nx.example.test", type: DNSSECRecord.Kind.a, claim: .nxdomain) { records in
            records.filter { $0.type != DNSSECRecord.Kind.nsec && $0.typeCovered != DNSSECRecord.Kind.nsec }
        }
        guard case .bogus(let reason)? = verdict else { Issue.record("not bogus"); return }
        #expect(reason.problem == .denialMissing)
    }

    @Test func wildcardNODATAUnderNSECIsSecure() throws {
        // x.wild.example.test matches *.wild.example.test, which has no TXT (RFC 4035 §3.1.3.4).
        #expect(try labDenialVerdict("x.wild.example.test", type: DNSSECRecord.Kind.txt, claim: .nodata)?.kind == "secure")
    }

    @Test func wildcardNODATAUnderNSECForATypeTheWildcardHasIsBogus() throws {
        #expect(try labDenialVerdict("x.wild.example.test", type: DNSSECRecord.Kind.a, claim: .nodata)?.kind == "bogus")
    }

    @Test func wildcardNODATAUnderNSECWithoutTheNameCoveredIsBogus() throws {
        // Only the wildcard's NSEC, passed with another owner: nothing shows x.wild.example.test absent.
        let verdict = try labDenialVerdict("x.wild.example.test", type: DNSSECRecord.Kind.txt, claim: .nodata) { records in
            records.filter { $0.type == DNSSECRecord.Kind.soa || $0.typeCovered == DNSSECRecord.Kind.soa }
                + [DNSSECRecord(presentation: "*.wild.example.test. 60 IN NSEC *.wild.example.test. A RRSIG NSEC")!]
        }
        #expect(verdict?.kind == "bogus")
    }

    @Test func nxdomainBelowAnUnsignedDelegationIsInsecure() throws {
        // unsigned.example.test's own SOA is unsigned: insecure through the parent's NSEC.
        #expect(try labDenialVerdict("nx.unsigned.example.test", type: DNSSECRecord.Kind.a, claim: .nxdomain)?.kind == "insecure")
    }
}

/// NXDOMAIN, NODATA and wildcard NODATA under NSEC3, denials through opt-out spans (insecure, RFC 5155
/// §9.2, where delv says secure), and the NSEC3 limits (hash algorithm 1 only, at most 150 iterations).
@Suite struct DNSSECNSEC3Tests {
    @Test func nodataUnderNSEC3IsSecure() throws {
        #expect(try labDenialVerdict("www.test", type: DNSSECRecord.Kind.txt, claim: .nodata)?.kind == "secure")
    }

    @Test func nxdomainUnderNSEC3IsSecure() throws {
        #expect(try labDenialVerdict("nx.test", type: DNSSECRecord.Kind.a, claim: .nxdomain)?.kind == "secure")
    }

    @Test func nxdomainUnderNSEC3ForANameThatExistsIsBogus() throws {
        #expect(try labDenialVerdict("www.test", type: DNSSECRecord.Kind.a, claim: .nxdomain)?.kind == "bogus")
    }

    @Test func wildcardNODATAUnderNSEC3IsSecure() throws {
        // RFC 5155 §8.7: the closest encloser proof for x.wild.test and the NSEC3 matching *.wild.test.
        #expect(try labDenialVerdict("x.wild.test", type: DNSSECRecord.Kind.txt, claim: .nodata)?.kind == "secure")
        #expect(try labDenialVerdict("a.b.wild.test", type: DNSSECRecord.Kind.txt, claim: .nodata)?.kind == "secure")
    }

    @Test func wildcardNODATAUnderNSEC3ForATypeTheWildcardHasIsBogus() throws {
        #expect(try labDenialVerdict("x.wild.test", type: DNSSECRecord.Kind.a, claim: .nodata)?.kind == "bogus")
    }

    @Test func nodataForTheDSOfAnUnsignedDelegationUnderNSEC3IsSecure() throws {
        #expect(try labDenialVerdict("unsigned.test", type: DNSSECRecord.Kind.ds, claim: .nodata)?.kind == "secure")
    }

    @Test func nodataForAnotherTypeFromTheParentSideNSEC3OfADelegationIsBogus() throws {
        // The NSEC3 matching unsigned.test is the parent's (NS, no SOA): it says nothing of the child's TXT.
        let (lab, anchors) = try LabZones.current()
        let owner = try #require(WireName("unsigned.test"))
        var validation = AnswerValidation(name: owner, type: DNSSECRecord.Kind.txt, answer: [],
                                          authority: lab.negativeAuthority(owner, type: DNSSECRecord.Kind.ds), claim: .nodata,
                                          anchors: anchors, now: nowSeconds())
        #expect(lab.run(&validation).verdict?.kind == "bogus")
    }

    @Test func nodataForTheDSOfADelegationInAnOptOutSpanIsInsecure() throws {
        // RFC 5155 §8.6: no NSEC3 matches; the next closer's cover has opt-out.
        let verdict = try labDenialVerdict("child.optout.test", type: DNSSECRecord.Kind.ds, claim: .nodata)
        guard case .insecure(let why)? = verdict else { Issue.record("\(String(describing: verdict))"); return }
        #expect(why.cause == .optOut && why.detail.contains("opt-out"))
    }

    @Test func wildcardNODATAWhoseNextCloserIsInAnOptOutSpanIsInsecure() throws {
        // RFC 5155 §9.2 again (Unbound: "matching wildcard is in optout range, insecure").
        let verdict = try labDenialVerdict("x.wild.optout.test", type: DNSSECRecord.Kind.txt, claim: .nodata)
        guard case .insecure(let why)? = verdict else { Issue.record("\(String(describing: verdict))"); return }
        #expect(why.cause == .optOut && why.detail.contains("opt-out"))
    }

    @Test func nxdomainInAnOptOutSpanIsInsecure() throws {
        // RFC 5155 §9.2 (Unbound's reading; delv calls it secure): an opt-out cover of the next closer name
        // leaves room for an unsigned delegation there.
        let verdict = try labDenialVerdict("nx.optout.test", type: DNSSECRecord.Kind.a, claim: .nxdomain)
        guard case .insecure(let why)? = verdict else { Issue.record("\(String(describing: verdict))"); return }
        #expect(why.cause == .optOut && why.detail.contains("opt-out"))
    }

    @Test func nodataUnderNSEC3ForAListedTypeIsBogus() throws {
        #expect(try labDenialVerdict("www.test", type: DNSSECRecord.Kind.a, claim: .nodata)?.kind == "bogus")
    }

    /// A zone anchored by its own key, whose NODATA proof is one signed NSEC3 made here.
    private func nodata(nsec3 text: String) throws -> DNSSECVerdict? {
        let key = try TestKey(zone: "bad.test.")
        let now = nowSeconds()
        let nsec3 = try #require(DNSSECRecord(presentation: text))
        let authority = [nsec3] + (try key.sign([nsec3], inception: now - 3600, expiration: now + 86400))
        var validation = AnswerValidation(name: try #require(WireName("www.bad.test")), type: DNSSECRecord.Kind.txt, answer: [],
                                          authority: authority, claim: .nodata, anchors: TrustAnchors(records: [key.dnskey]), now: now)
        var step = validation.start()
        for _ in 0..<4 {
            guard case .fetch(let request) = step else { break }
            step = validation.received(request, records: [key.dnskey] + (try key.sign([key.dnskey], inception: now - 3600, expiration: now + 86400)))
        }
        guard case .verdict(let verdict) = step else { return nil }
        return verdict
    }

    @Test func tenThousandIterationsIsInsecure() throws {
        let verdict = try nodata(nsec3: "abcdefghijklmnopqrstuv0123456789.bad.test. 60 IN NSEC3 1 0 10000 - abcdefghijklmnopqrstuv0123456789 A RRSIG")
        guard case .insecure(let why)? = verdict else { Issue.record("\(String(describing: verdict))"); return }
        #expect(why.cause == .nsec3Iterations && why.detail.contains("150"))
    }

    @Test func hashAlgorithmTwoOnlyIsBogus() throws {
        let verdict = try nodata(nsec3: "abcdefghijklmnopqrstuv0123456789.bad.test. 60 IN NSEC3 2 0 0 - abcdefghijklmnopqrstuv0123456789 A RRSIG")
        guard case .bogus(let reason)? = verdict else { Issue.record("\(String(describing: verdict))"); return }
        #expect(reason.problem == .denialMissing)
    }

    @Test func randomBytesInNSEC3AreBogus() throws {
        for _ in 0..<30 {
            let key = try TestKey(zone: "bad.test.")
            let now = nowSeconds()
            var nsec3 = try #require(DNSSECRecord(presentation: "abcdefghijklmnopqrstuv0123456789.bad.test. 60 IN NSEC3 1 0 0 - abcdefghijklmnopqrstuv0123456789 A RRSIG"))
            let signatures = try key.sign([nsec3], inception: now - 3600, expiration: now + 86400)
            nsec3.rdata = [1] + (0..<Int.random(in: 0...40)).map { _ in UInt8.random(in: 0...255) }
            var validation = AnswerValidation(name: try #require(WireName("www.bad.test")), type: DNSSECRecord.Kind.txt, answer: [],
                                              authority: [nsec3] + signatures, claim: .nodata,
                                              anchors: TrustAnchors(records: [key.dnskey]), now: now)
            var step = validation.start()
            if case .fetch(let request) = step {
                step = validation.received(request, records: [key.dnskey] + (try key.sign([key.dnskey], inception: now - 3600, expiration: now + 86400)))
            }
            guard case .verdict(let verdict) = step else { Issue.record("no verdict"); return }
            #expect(verdict.kind == "bogus")
        }
    }
}
