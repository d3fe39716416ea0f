import Foundation
import HostPin
import Testing

/// The validation of one positive answer, fed RRsets from the signed lab's zone files: the verdict must
/// equal delv's for every positive row of zones/signed/README.md (SignedLabTests checks delv itself).
@Suite struct DNSSECAnswerValidationTests {
    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        let verdict: String
        var testDescription: String { "\(name) A → \(verdict)" }
    }

    static let rows: [Row] = [
        Row(name: "www.example.test", verdict: "secure"),
        Row(name: "x.wild.example.test", verdict: "secure"),
        Row(name: "www.test", verdict: "secure"),
        Row(name: "www.unsigned.example.test", verdict: "insecure"),
        Row(name: "modified.example.test", verdict: "bogus"),
        Row(name: "www.badds.example.test", verdict: "bogus"),
        Row(name: "www.expired.example.test", verdict: "bogus"),
        // NSEC3 proofs: an unsigned delegation (the NSEC3 matching it; an opt-out span covering it) and
        // wildcard expansions, whose no-closer-match proof is an NSEC3 covering the next closer name.
        Row(name: "www.unsigned.test", verdict: "insecure"),
        Row(name: "www.child.optout.test", verdict: "insecure"),
        Row(name: "www.optout.test", verdict: "secure"),
        Row(name: "x.wild.test", verdict: "secure"),
        Row(name: "a.b.wild.test", verdict: "secure"),
        // An expansion whose next closer name an opt-out NSEC3 covers: insecure (RFC 5155 §9.2, delv agrees).
        Row(name: "x.wild.optout.test", verdict: "insecure"),
    ]

    private func validation(_ name: String, lab: LabZones, anchors: TrustAnchors,
                            limits: ValidationLimits = ValidationLimits()) throws -> AnswerValidation {
        let owner = try #require(WireName(name))
        let (answer, authority) = lab.positiveAnswer(owner, type: DNSSECRecord.Kind.a)
        return AnswerValidation(name: owner, type: DNSSECRecord.Kind.a, answer: answer, authority: authority,
                                anchors: anchors, now: nowSeconds(), limits: limits)
    }

    @Test(arguments: rows)
    func verdictEqualsDelvs(_ row: Row) throws {
        let (lab, anchors) = try LabZones.current()
        var validation = try validation(row.name, lab: lab, anchors: anchors)
        let (verdict, _) = lab.run(&validation)
        #expect(verdict?.kind == row.verdict, "\(String(describing: verdict))")
    }

    @Test func chainIsFetchedBottomUpToTheAnchor() throws {
        let (lab, anchors) = try LabZones.current()
        var validation = try validation("www.example.test", lab: lab, anchors: anchors)
        let (verdict, requests) = lab.run(&validation)
        #expect(requests.map(\.description) == [
            "example.test. DNSKEY", "example.test. DS", "test. DNSKEY", "test. DS", ". DNSKEY",
        ])
        guard case .secure(let ttl) = verdict else { Issue.record("\(String(describing: verdict))"); return }
        #expect(ttl == SecureTTLs(records: [DNSSECRecord.Kind.a: 3600])) // www's TTL; every DNSKEY and DS TTL of the lab is above it
        #expect(validation.checksSpent == 6) // one per DNSKEY and DS RRset of the chain, one for the A RRset
    }

    @Test func bogusReasonsNameTheRRsetAndTheProblem() throws {
        let (lab, anchors) = try LabZones.current()
        func reason(_ name: String) throws -> BogusReason? {
            var validation = try validation(name, lab: lab, anchors: anchors)
            if case .bogus(let reason)? = lab.run(&validation).verdict { return reason }
            return nil
        }
        let modified = try #require(try reason("modified.example.test"))
        #expect(modified.rrset == "modified.example.test. A")
        guard case .signatureInvalid = modified.problem else { Issue.record("\(modified)"); return }
        #expect(try reason("www.badds.example.test")?.problem == .noKeyMatchesDS)
        let expired = try #require(try reason("www.expired.example.test"))
        #expect(expired.rrset == "expired.example.test. DNSKEY")
        guard case .signatureExpired = expired.problem else { Issue.record("\(expired)"); return }
    }

    /// Each RRset keeps its own verified TTL (RFC 4035 §5.3.3): chain's CNAME 30 s, alias's 5 s, the
    /// address 3600 s — not the whole answer the chain's smallest.
    @Test func cnameChainIsSecureWithEachRRsetsOwnTTL() throws {
        let (lab, anchors) = try LabZones.current()
        var validation = try validation("chain.example.test", lab: lab, anchors: anchors)
        let expected = SecureTTLs(records: [DNSSECRecord.Kind.a: 3600],
                                  cnames: [try #require(WireName("chain.example.test")): 30,
                                           try #require(WireName("alias.example.test")): 5])
        #expect(lab.run(&validation).verdict == .secure(expected))
        #expect(expected.shortest == 5)
    }

    @Test func cnameChainFromSecureRecordsIntoABogusOneIsBogus() throws {
        let (lab, anchors) = try LabZones.current()
        let owner = try #require(WireName("chain.example.test"))
        var (answer, _) = lab.positiveAnswer(owner, type: DNSSECRecord.Kind.a)
        let index = try #require(answer.firstIndex { $0.type == DNSSECRecord.Kind.a })
        answer[index].rdata = [127, 0, 0, 66]
        var validation = AnswerValidation(name: owner, type: DNSSECRecord.Kind.a, answer: answer, anchors: anchors, now: nowSeconds())
        guard case .bogus(let reason)? = lab.run(&validation).verdict else { Issue.record("not bogus"); return }
        #expect(reason.rrset == "www.example.test. A")
    }

    @Test func wildcardExpansionWithoutItsNSECProofIsBogus() throws {
        let (lab, anchors) = try LabZones.current()
        let owner = try #require(WireName("x.wild.example.test"))
        let (answer, _) = lab.positiveAnswer(owner, type: DNSSECRecord.Kind.a)
        var validation = AnswerValidation(name: owner, type: DNSSECRecord.Kind.a, answer: answer, anchors: anchors, now: nowSeconds())
        guard case .bogus(let reason)? = lab.run(&validation).verdict else { Issue.record("not bogus"); return }
        #expect(reason.problem == .wildcardWithoutProof)
    }

    @Test func wildcardExpansionUnderNSEC3WithoutItsProofIsBogus() throws {
        let (lab, anchors) = try LabZones.current()
        let owner = try #require(WireName("x.wild.test"))
        let (answer, authority) = lab.positiveAnswer(owner, type: DNSSECRecord.Kind.a)
        #expect(authority.contains { $0.type == DNSSECRecord.Kind.nsec3 })
        var validation = AnswerValidation(name: owner, type: DNSSECRecord.Kind.a, answer: answer, anchors: anchors, now: nowSeconds())
        guard case .bogus(let reason)? = lab.run(&validation).verdict else { Issue.record("not bogus"); return }
        #expect(reason.problem == .wildcardWithoutProof)
    }

    @Test func unsignedChildUnderNSEC3IsInsecureThroughTheMatchingNSEC3() throws {
        let (lab, anchors) = try LabZones.current()
        var validation = try validation("www.unsigned.test", lab: lab, anchors: anchors)
        let (verdict, requests) = lab.run(&validation)
        #expect(verdict == .insecure(why: InsecureReason(.unsignedDelegation, "unsigned.test. is delegated without DS (signed NSEC3)")))
        #expect(requests.map(\.description) == [". DNSKEY", "test. DS", "test. DNSKEY", "unsigned.test. DS"])
    }

    @Test func unsignedChildInAnOptOutSpanIsInsecure() throws {
        let (lab, anchors) = try LabZones.current()
        let child = try #require(WireName("child.optout.test"))
        // No NSEC3 matches the delegation: the proof is the closest encloser's and the opt-out cover's.
        #expect(!lab.nsec3s(in: try #require(WireName("optout.test"))).contains { $0.matches(child) })
        var validation = try validation("www.child.optout.test", lab: lab, anchors: anchors)
        #expect(lab.run(&validation).verdict
            == .insecure(why: InsecureReason(.optOut, "child.optout.test. is in an opt-out span without DS (signed NSEC3 with opt-out)")))
    }

    @Test func unsignedChildUnderNSEC3WhoseProofIsForgedIsBogus() throws {
        let (lab, anchors) = try LabZones.current()
        for name in ["unsigned.test", "child.optout.test"] {
            let delegation = try #require(WireName(name))
            // Each NSEC3's flags flipped after signing (opt-out set or cleared): its signature fails.
            let forged = lab.answer(.ds(delegation)).map { record -> DNSSECRecord in
                guard record.type == DNSSECRecord.Kind.nsec3 else { return record }
                var copy = record
                copy.rdata[1] ^= 1
                return copy
            }
            var flipped = try validation("www." + name, lab: lab, anchors: anchors)
            #expect(lab.run(&flipped, override: { $0 == .ds(delegation) ? forged : nil }).verdict?.kind == "bogus", "\(name)")
            var stripped = try validation("www." + name, lab: lab, anchors: anchors)
            let unsigned = lab.answer(.ds(delegation)).filter { $0.type != DNSSECRecord.Kind.rrsig }
            #expect(lab.run(&stripped, override: { $0 == .ds(delegation) ? unsigned : nil }).verdict?.kind == "bogus", "\(name)")
        }
    }

    @Test func randomBytesInTheNSEC3OfADSProofAreBogus() throws {
        let (lab, anchors) = try LabZones.current()
        for name in ["unsigned.test", "child.optout.test"] {
            let delegation = try #require(WireName(name))
            for _ in 0..<20 {
                var validation = try validation("www." + name, lab: lab, anchors: anchors)
                let (verdict, _) = lab.run(&validation) { asked in
                    guard asked == .ds(delegation) else { return nil }
                    return lab.answer(asked).map { record in
                        guard record.type == DNSSECRecord.Kind.nsec3 else { return record }
                        var copy = record
                        copy.rdata = [1] + (0..<Int.random(in: 0...60)).map { _ in UInt8.random(in: 0...255) }
                        return copy
                    }
                }
                #expect(verdict?.kind == "bogus", "\(name): \(String(describing: verdict))")
            }
        }
    }

    @Test func answerWithoutSignaturesIsBogus() throws {
        let (lab, anchors) = try LabZones.current()
        let owner = try #require(WireName("www.example.test"))
        let stripped = lab.positiveAnswer(owner, type: DNSSECRecord.Kind.a).answer.filter { $0.type != DNSSECRecord.Kind.rrsig }
        var validation = AnswerValidation(name: owner, type: DNSSECRecord.Kind.a, answer: stripped, anchors: anchors, now: nowSeconds())
        guard case .bogus(let reason)? = lab.run(&validation).verdict else { Issue.record("not bogus"); return }
        #expect(reason.problem == .signaturesMissing)
    }

    @Test func nameNoAnchorCoversIsIndeterminate() throws {
        let (lab, _) = try LabZones.current()
        let anchors = TrustAnchors(records: [try #require(DNSSECRecord(presentation:
            "other.test. IN DS 1 13 2 0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF"))])
        var validation = try validation("www.example.test", lab: lab, anchors: anchors)
        #expect(lab.run(&validation).verdict == .indeterminate)
    }

    @Test func randomBytesInTheChainsDSOrDNSKEYAreBogus() throws {
        let (lab, anchors) = try LabZones.current()
        for request in [ChainRequest.ds(try #require(WireName("example.test"))), .dnskey(try #require(WireName("example.test")))] {
            var validation = try validation("www.example.test", lab: lab, anchors: anchors)
            let (verdict, _) = lab.run(&validation) { asked in
                guard asked == request else { return nil }
                return lab.answer(asked).map { record in
                    guard record.type != DNSSECRecord.Kind.rrsig else { return record }
                    var copy = record
                    copy.rdata = (0..<Int.random(in: 0...70)).map { _ in UInt8.random(in: 0...255) }
                    return copy
                }
            }
            #expect(verdict?.kind == "bogus", "\(request): \(String(describing: verdict))")
        }
    }

    @Test func unsignedChildIsInsecureThroughTheParentsSignedNSEC() throws {
        let (lab, anchors) = try LabZones.current()
        var validation = try validation("www.unsigned.example.test", lab: lab, anchors: anchors)
        let (verdict, requests) = lab.run(&validation)
        #expect(verdict == .insecure(why: InsecureReason(.unsignedDelegation, "unsigned.example.test. is delegated without DS (signed NSEC)")))
        #expect(requests.map(\.description) == [
            ". DNSKEY", "test. DS", "test. DNSKEY", "example.test. DS", "example.test. DNSKEY", "unsigned.example.test. DS",
        ])
    }

    @Test func unsignedChildWhoseNSECProofIsStrippedOrForgedIsBogus() throws {
        let (lab, anchors) = try LabZones.current()
        let unsigned = try #require(WireName("unsigned.example.test"))
        let stripped = lab.answer(.ds(unsigned)).filter { $0.type != DNSSECRecord.Kind.rrsig }
        var first = try validation("www.unsigned.example.test", lab: lab, anchors: anchors)
        guard case .bogus(let reason)? = lab.run(&first, override: { $0 == .ds(unsigned) ? stripped : nil }).verdict else {
            Issue.record("not bogus without the NSEC's RRSIG"); return
        }
        #expect(reason.problem == .signaturesMissing)
        // The NSEC's bitmap changed (NS taken out) after signing: its signature fails.
        let forged = lab.answer(.ds(unsigned)).map { record -> DNSSECRecord in
            guard record.type == DNSSECRecord.Kind.nsec else { return record }
            return DNSSECRecord(presentation: "unsigned.example.test. 60 IN NSEC v6only.example.test. A RRSIG NSEC") ?? record
        }
        var second = try validation("www.unsigned.example.test", lab: lab, anchors: anchors)
        #expect(lab.run(&second, override: { $0 == .ds(unsigned) ? forged : nil }).verdict?.kind == "bogus")
        // No proof at all (a server that answers the DS query with nothing).
        var third = try validation("www.unsigned.example.test", lab: lab, anchors: anchors)
        guard case .bogus(let none)? = lab.run(&third, override: { $0 == .ds(unsigned) ? [] : nil }).verdict else {
            Issue.record("not bogus without a proof"); return
        }
        #expect(none.problem == .dsMissingWithoutProof)
    }

    @Test func missingDSIsBogusUntilDenialProofsAreChecked() throws {
        let (lab, anchors) = try LabZones.current()
        var validation = try validation("www.example.test", lab: lab, anchors: anchors)
        let (verdict, _) = lab.run(&validation) { $0 == .ds(WireName("example.test")!) ? [] : nil }
        guard case .bogus(let reason)? = verdict else { Issue.record("not bogus"); return }
        #expect(reason.problem == .dsMissingWithoutProof)
    }

    @Test func chainQueryCapStopsTheWalk() throws {
        let (lab, anchors) = try LabZones.current()
        var limits = ValidationLimits()
        limits.chainQueries = 2
        var validation = try validation("www.example.test", lab: lab, anchors: anchors, limits: limits)
        guard case .bogus(let reason)? = lab.run(&validation).verdict else { Issue.record("not bogus"); return }
        #expect(reason.problem == .capReached(.chainQueries))
    }

    /// A zone whose anchor is its own key, for the time and algorithm cases without the lab.
    private func anchoredAnswer(key: TestKey, inception: Int64, expiration: Int64,
                                anchor: [DNSSECRecord]? = nil) throws -> DNSSECVerdict? {
        let now = nowSeconds()
        let records = [try aRecord("www.bad.test")]
        let answer = records + (try key.sign(records, inception: inception, expiration: expiration))
        let keySet = [key.dnskey] + (try key.sign([key.dnskey], inception: now - 3600, expiration: now + 86400))
        var validation = AnswerValidation(name: try #require(WireName("www.bad.test")), type: DNSSECRecord.Kind.a, answer: answer,
                                          anchors: TrustAnchors(records: anchor ?? [key.dnskey]), now: now)
        var step = validation.start()
        for _ in 0..<4 {
            switch step {
            case .verdict(let verdict): return verdict
            case .fetch(let request):
                #expect(request == .dnskey(key.zone))
                step = validation.received(request, records: keySet)
            }
        }
        return nil
    }

    /// x.bad.test A expanded from *.bad.test in a zone anchored by its own key, with `proof` (NSEC3 lines
    /// under bad.test.) in the authority section, signed unless `signed` is false.
    private func wildcardExpansion(proof: [String], signed: Bool = true) throws -> DNSSECVerdict? {
        let key = try TestKey(zone: "bad.test.")
        let now = nowSeconds()
        let star = try aRecord("*.bad.test")
        var expanded = star
        expanded.owner = try #require(WireName("x.bad.test"))
        // A server writes the expansion's RRSIG under the name asked for too (RFC 4035 §3.1.3.3).
        let answer = [expanded] + (try key.sign([star], inception: now - 3600, expiration: now + 86400)).map { signature in
            var copy = signature
            copy.owner = expanded.owner
            return copy
        }
        var authority: [DNSSECRecord] = []
        for line in proof {
            let nsec3 = try #require(DNSSECRecord(presentation: line))
            authority += [nsec3] + (signed ? try key.sign([nsec3], inception: now - 3600, expiration: now + 86400) : [])
        }
        let keySet = [key.dnskey] + (try key.sign([key.dnskey], inception: now - 3600, expiration: now + 86400))
        var validation = AnswerValidation(name: expanded.owner, type: DNSSECRecord.Kind.a, answer: answer, authority: authority,
                                          anchors: TrustAnchors(records: [key.dnskey]), now: now)
        var step = validation.start()
        for _ in 0..<4 {
            guard case .fetch(let request) = step else { break }
            step = validation.received(request, records: keySet)
        }
        guard case .verdict(let verdict) = step else { return nil }
        return verdict
    }

    @Test func wildcardExpansionWhoseNSEC3ProofIsAboveTheIterationLimitIsInsecure() throws {
        let line = "0123456789abcdefghijklmnopqrstuv.bad.test. 60 IN NSEC3 1 0 151 - 0123456789abcdefghijklmnopqrstuv A RRSIG"
        let verdict = try wildcardExpansion(proof: [line])
        guard case .insecure(let why)? = verdict else { Issue.record("\(String(describing: verdict))"); return }
        #expect(why.cause == .nsec3Iterations)
        #expect(why.detail.contains("150"))
        // Unsigned, the same record proves nothing: bogus, never a downgrade.
        guard case .bogus(let reason)? = try wildcardExpansion(proof: [line], signed: false) else { Issue.record("not bogus"); return }
        #expect(reason.problem == .wildcardWithoutProof)
    }

    @Test func signatureTimesFollowTheOneHourAllowance() throws {
        let key = try TestKey(zone: "bad.test.")
        let now = nowSeconds(), day: Int64 = 86400
        #expect(try anchoredAnswer(key: key, inception: now + day, expiration: now + 30 * day)?.kind == "bogus")
        #expect(try anchoredAnswer(key: key, inception: now - 30 * day, expiration: now - day)?.kind == "bogus")
        #expect(try anchoredAnswer(key: key, inception: now + 1800, expiration: now + 30 * day)?.kind == "secure")
        #expect(try anchoredAnswer(key: key, inception: now - 30 * day, expiration: now - 1800)?.kind == "secure")
    }

    @Test func revokedAnchorKeyIsBogus() throws {
        let key = try TestKey(zone: "bad.test.", flags: 257 | 0x80)
        let now = nowSeconds()
        guard case .bogus(let reason)? = try anchoredAnswer(key: key, inception: now - 3600, expiration: now + 86400) else {
            Issue.record("not bogus"); return
        }
        #expect(reason.problem == .revokedKey)
    }

    @Test func dsAnchorOnlyForAnUnsupportedAlgorithmIsInsecure() throws {
        let key = try TestKey(zone: "bad.test.")
        let now = nowSeconds()
        let anchor = try #require(DNSSECRecord(presentation:
            "bad.test. IN DS 1 5 2 0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF"))
        #expect(try anchoredAnswer(key: key, inception: now - 3600, expiration: now + 86400, anchor: [anchor])?.kind == "insecure")
    }
}
