import Foundation
import HostPin
import Testing

/// Bad input and the checks HostPin adds to ldns 1.8.3, each with its outcome, on zones signed here or
/// on the signed lab's zone files (issue 28, "Bad input"). Cases tested elsewhere are not repeated: see
/// the list in docs/ARCHITECTURE.md, "DNSSEC validation".
@Suite struct DNSSECBadInputTests {
    private let next = "0123456789abcdefghijklmnopqrstuv"

    // MARK: denial proofs from the wrong zone

    /// attacker.test signs an NSEC3 whose owner label is the hash of www.victim.test: a valid signature,
    /// but by a zone that does not hold the name (RFC 5155 §8.3: the NSEC3 must be the name's zone's).
    @Test func nsec3FromAnotherZoneProvesNothing() throws {
        let zones = try SignedZones(["victim.test.", "attacker.test."], anchored: ["victim.test.", "attacker.test."])
        let nsec3 = try #require(DNSSECRecord(presentation:
            "\(try nsec3Label("www.victim.test.")).attacker.test. 60 IN NSEC3 1 0 0 - \(next) A RRSIG"))
        let verdict = try zones.verdict("www.victim.test", type: DNSSECRecord.Kind.txt, answer: [],
                                        authority: try zones.signed([nsec3], by: "attacker.test."), claim: .nodata)
        guard case .bogus(let reason)? = verdict else { Issue.record("\(String(describing: verdict))"); return }
        #expect(reason.problem == .denialMissing)
    }

    /// Nor does that zone's NSEC3 with 10 000 iterations make the name insecure (a downgrade).
    @Test func nsec3FromAnotherZoneDoesNotMakeANameInsecure() throws {
        let zones = try SignedZones(["victim.test.", "attacker.test."], anchored: ["victim.test.", "attacker.test."])
        let costly = try #require(DNSSECRecord(presentation:
            "\(try nsec3Label("www.victim.test.")).attacker.test. 60 IN NSEC3 1 0 10000 - \(next) A RRSIG"))
        let downgraded = try zones.verdict("www.victim.test", type: DNSSECRecord.Kind.txt, answer: [],
                                           authority: try zones.signed([costly], by: "attacker.test."), claim: .nodata)
        #expect(downgraded?.kind == "bogus", "\(String(describing: downgraded))")
    }

    /// A child zone's last NSEC wraps round to its apex, which ldns reads as covering every name after its
    /// owner — names of the parent zone included. The child does not speak for them (RFC 4035 §5.4).
    @Test func nsecFromAChildZoneProvesNothingAboveIt() throws {
        let zones = try SignedZones(["bad.test.", "child.bad.test."], anchored: ["bad.test."])
        let wrapping = try #require(DNSSECRecord(presentation: "www.child.bad.test. 60 IN NSEC child.bad.test. A RRSIG NSEC"))
        #expect(NSECRecord.covers(wrapping, try #require(WireName("nx.bad.test"))))
        let verdict = try zones.verdict("nx.bad.test", answer: [], authority: try zones.signed([wrapping], by: "child.bad.test."),
                                        claim: .nxdomain)
        guard case .bogus(let reason)? = verdict else { Issue.record("\(String(describing: verdict))"); return }
        #expect(reason.problem == .denialMissing)
    }

    /// An NSEC3 with NS and without SOA is the parent's side of a delegation: it proves no type absent at
    /// the child's apex but DS (RFC 6840 §4.1, as for NSEC).
    @Test func parentSideNSEC3ProvesNoDataOnlyForDS() throws {
        let zones = try SignedZones(["bad.test."], anchored: ["bad.test."])
        let nsec3 = try #require(DNSSECRecord(presentation:
            "\(try nsec3Label("child.bad.test.")).bad.test. 60 IN NSEC3 1 0 0 - \(next) NS"))
        let authority = try zones.signed([nsec3], by: "bad.test.")
        let forA = try zones.verdict("child.bad.test", answer: [], authority: authority, claim: .nodata)
        #expect(forA?.kind == "bogus", "\(String(describing: forA))")
        let forDS = try zones.verdict("child.bad.test", type: DNSSECRecord.Kind.ds, answer: [], authority: authority, claim: .nodata)
        #expect(forDS?.kind == "secure", "\(String(describing: forDS))")
    }

    /// The other side of the cut: the child's apex NSEC (SOA, no DS) says nothing about the DS, which
    /// only the parent holds (RFC 6840 §4.1); for the DS query it is no NODATA proof.
    @Test func childApexNSECProvesNoDSAbsent() throws {
        let zones = try SignedZones(["bad.test.", "child.bad.test."], anchored: ["bad.test."])
        let apex = try #require(DNSSECRecord(presentation: "child.bad.test. 60 IN NSEC www.child.bad.test. NS SOA RRSIG NSEC DNSKEY"))
        let verdict = try zones.verdict("child.bad.test", type: DNSSECRecord.Kind.ds, answer: [],
                                        authority: try zones.signed([apex], by: "child.bad.test."), claim: .nodata)
        #expect(verdict?.kind == "bogus", "\(String(describing: verdict))")
        // For a type the apex lacks, the same NSEC is the proof.
        let forTXT = try zones.verdict("child.bad.test", type: DNSSECRecord.Kind.txt, answer: [],
                                       authority: try zones.signed([apex], by: "child.bad.test."), claim: .nodata)
        #expect(forTXT?.kind == "secure", "\(String(describing: forTXT))")
    }

    /// The lab's parent-side NSEC at unsigned.example.test (NS, no SOA) covers every name below the cut in
    /// canonical order; it proves none of them absent (RFC 6840 §4.1), nor a type at the cut.
    @Test func parentSideNSECProvesNothingBelowTheCut() throws {
        let (lab, anchors) = try LabZones.current()
        let cut = try #require(WireName("unsigned.example.test"))
        let parentSide = lab.rrset(in: try #require(WireName("example.test")), owner: cut, type: DNSSECRecord.Kind.nsec)
        #expect(parentSide.count == 2) // the NSEC and its RRSIG
        for (name, type, claim) in [("nx.unsigned.example.test", DNSSECRecord.Kind.a, AnswerValidation.Claim.nxdomain),
                                    ("unsigned.example.test", DNSSECRecord.Kind.a, .nodata)] {
            var validation = AnswerValidation(name: try #require(WireName(name)), type: type, answer: [], authority: parentSide,
                                              claim: claim, anchors: anchors, now: nowSeconds())
            let verdict = lab.run(&validation).verdict
            guard case .bogus(let reason)? = verdict else { Issue.record("\(name) \(claim): \(String(describing: verdict))"); continue }
            #expect(reason.problem == .denialMissing)
        }
    }

    /// Each NSEC3 record is hashed with its own parameters (ldns's denial functions take the first
    /// record's for all): the match is found behind a record with another salt and iteration count.
    @Test func nsec3ParametersAreEachRecordsOwn() throws {
        let zones = try SignedZones(["bad.test."], anchored: ["bad.test."])
        let other = try #require(DNSSECRecord(presentation: "\(next).bad.test. 60 IN NSEC3 1 0 5 ABCD \(next) A RRSIG"))
        let match = try #require(DNSSECRecord(presentation:
            "\(try nsec3Label("www.bad.test.")).bad.test. 60 IN NSEC3 1 0 0 - \(next) A RRSIG"))
        let authority = try zones.signed([other], by: "bad.test.") + zones.signed([match], by: "bad.test.")
        let verdict = try zones.verdict("www.bad.test", type: DNSSECRecord.Kind.txt, answer: [], authority: authority, claim: .nodata)
        #expect(verdict?.kind == "secure", "\(String(describing: verdict))")
    }

    // MARK: denial records' own signatures, random bytes

    @Test func nsec3ProofWithStrippedSignaturesIsBogus() throws {
        let verdict = try labDenialVerdict("nx.test", type: DNSSECRecord.Kind.a, claim: .nxdomain) { records in
            records.filter { $0.typeCovered != DNSSECRecord.Kind.nsec3 }
        }
        // Bogus: the unsigned NSEC3 RRsets are taken as unsigned data, whose zone (test.) has no proof of
        // an unsigned delegation above them.
        #expect(verdict?.kind == "bogus", "\(String(describing: verdict))")
    }

    @Test func randomBytesInNSECAreBogus() throws {
        for _ in 0..<30 {
            let verdict = try labDenialVerdict("nx.example.test", type: DNSSECRecord.Kind.a, claim: .nxdomain) { records in
                records.map { record in
                    guard record.type == DNSSECRecord.Kind.nsec else { return record }
                    var copy = record
                    copy.rdata = (0..<Int.random(in: 0...60)).map { _ in UInt8.random(in: 0...255) }
                    return copy
                }
            }
            #expect(verdict?.kind == "bogus", "\(String(describing: verdict))")
        }
    }

    /// Random bytes in the answer's own RRSIG, its covered type kept (else the RRSIG joins another RRset
    /// and the A RRset is unsigned: bogus as well).
    @Test func randomBytesInTheAnswersRRSIGAreBogus() throws {
        let (lab, anchors) = try LabZones.current()
        let owner = try #require(WireName("www.example.test"))
        for keepCoveredType in [true, false] {
            for _ in 0..<20 {
                let answer = lab.positiveAnswer(owner, type: DNSSECRecord.Kind.a).answer.map { record -> DNSSECRecord in
                    guard record.type == DNSSECRecord.Kind.rrsig else { return record }
                    var copy = record
                    copy.rdata = (keepCoveredType ? Array(record.rdata.prefix(2)) : [])
                        + (0..<Int.random(in: 0...120)).map { _ in UInt8.random(in: 0...255) }
                    return copy
                }
                var validation = AnswerValidation(name: owner, type: DNSSECRecord.Kind.a, answer: answer, anchors: anchors, now: nowSeconds())
                let verdict = lab.run(&validation).verdict
                #expect(verdict?.kind == "bogus", "\(String(describing: verdict))")
            }
        }
    }

    /// An RRSIG whose RRset is absent (found by the fuzz target dnssec-validator): the answer's RRSIG over
    /// A without the A records, and a negative answer's NSEC RRSIGs without their NSECs. ldns's
    /// `ldns_verify_rrsig_time` reads the first record of the list it is given: on an empty one it
    /// dereferenced NULL.
    @Test func rrsigWithoutItsRRsetIsBogusNotACrash() throws {
        let (lab, anchors) = try LabZones.current()
        let owner = try #require(WireName("www.example.test"))
        let signaturesOnly = lab.positiveAnswer(owner, type: DNSSECRecord.Kind.a).answer.filter { $0.type == DNSSECRecord.Kind.rrsig }
        #expect(!signaturesOnly.isEmpty)
        var validation = AnswerValidation(name: owner, type: DNSSECRecord.Kind.a, answer: signaturesOnly, anchors: anchors, now: nowSeconds())
        guard case .bogus(let reason)? = lab.run(&validation).verdict else { Issue.record("not bogus"); return }
        #expect(reason.problem == .answerMissing)
        let verdict = try labDenialVerdict("nx.example.test", type: DNSSECRecord.Kind.a, claim: .nxdomain) { records in
            records.filter { $0.type != DNSSECRecord.Kind.nsec }
        }
        #expect(verdict?.kind == "bogus", "\(String(describing: verdict))")
    }

    /// The expansion of *.wild.example.test with its covering NSEC, that NSEC's RRSIG taken away.
    @Test func wildcardExpansionWhoseNSECIsUnsignedIsBogus() throws {
        let (lab, anchors) = try LabZones.current()
        let owner = try #require(WireName("x.wild.example.test"))
        let (answer, authority) = lab.positiveAnswer(owner, type: DNSSECRecord.Kind.a)
        #expect(authority.contains { $0.type == DNSSECRecord.Kind.nsec })
        var validation = AnswerValidation(name: owner, type: DNSSECRecord.Kind.a, answer: answer,
                                          authority: authority.filter { $0.type != DNSSECRecord.Kind.rrsig },
                                          anchors: anchors, now: nowSeconds())
        guard case .bogus(let reason)? = lab.run(&validation).verdict else { Issue.record("not bogus"); return }
        #expect(reason.problem == .wildcardWithoutProof)
    }

    // MARK: the chain

    /// 9 RRsets (a CNAME chain in one zone) each signed by 7 signatures that fail before one that
    /// verifies: 8 checks an RRset, within the per-RRset cap, reach the 64 of the resolution.
    @Test func checksCapCountsTheWholeResolution() throws {
        let zones = try SignedZones(["bad.test."], anchored: ["bad.test."])
        var answer: [DNSSECRecord] = []
        for link in 0..<9 {
            let alias = link == 0 ? "www.bad.test." : "c\(link).bad.test."
            let record = link == 8 ? try aRecord(alias)
                : DNSSECRecord(owner: try #require(WireName(alias)), type: DNSSECRecord.Kind.cname, ttl: 3600,
                               rdata: try #require(WireName("c\(link + 1).bad.test.")).wire)
            let set = try zones.signed([record], by: "bad.test.")
            let real = set[1]
            let broken = (1...7).map { number -> DNSSECRecord in
                var copy = real
                copy.rdata[copy.rdata.count - 1] ^= UInt8(number)
                return copy
            }
            answer += [record] + broken + [real]
        }
        let started = ContinuousClock.now
        let verdict = try zones.verdict("www.bad.test", answer: answer)
        guard case .bogus(let reason)? = verdict else { Issue.record("\(String(describing: verdict))"); return }
        #expect(reason.problem == .capReached(.checksPerResolution))
        #expect(reason.rrset == "c7.bad.test. CNAME") // 1 check for the DNSKEY set, 8 for each of 7 links, then the cap
        #expect(ContinuousClock.now - started < .seconds(2))
    }

    /// An RRset's TTL is capped by the chain that verified it: a DNSKEY RRset whose signature expires in
    /// 2 minutes caps an answer whose own signature lasts a day.
    @Test func verdictTTLIsCappedByTheKeySetsExpiry() throws {
        let zones = try SignedZones(["bad.test."], anchored: ["bad.test."])
        let key = try zones.key("bad.test.")
        let soon = try zones.signed([key.dnskey], by: "bad.test.", expiration: zones.now + 120)
        let verdict = try zones.verdict("www.bad.test", answer: try zones.signed([try aRecord("www.bad.test")], by: "bad.test.")) {
            $0 == .dnskey(key.zone) ? soon : nil
        }
        guard case .secure(let ttls)? = verdict, let ttl = ttls.addresses(DNSSECRecord.Kind.a) else {
            Issue.record("\(String(describing: verdict))"); return
        }
        #expect(ttl <= 120 && ttl >= 110)
    }

    /// A signed DS in the chain (not an anchor) for an algorithm HostPin does not verify: the child is
    /// insecure (RFC 4035 §5.2), whatever its own signatures.
    @Test func childDSOnlyForAnUnsupportedAlgorithmIsInsecure() throws {
        let zones = try SignedZones(["bad.test.", "child.bad.test."], anchored: ["bad.test."])
        let child = try #require(WireName("child.bad.test"))
        var ds = try zones.key("child.bad.test.").ds(digestType: 2)
        ds.rdata[2] = 5 // RSASHA1
        let signedDS = try zones.signed([ds], by: "bad.test.")
        let answer = try zones.signed([try aRecord("www.child.bad.test")], by: "child.bad.test.")
        let verdict = try zones.verdict("www.child.bad.test", answer: answer) { $0 == .ds(child) ? signedDS : nil }
        guard case .insecure? = verdict else { Issue.record("\(String(describing: verdict))"); return }
        // The same child with its real DS is secure.
        #expect(try zones.verdict("www.child.bad.test", answer: answer)?.kind == "secure")
    }

    /// www.good.test, secure, is a CNAME to www.broken.test, whose zone's DS matches no key it publishes.
    @Test func cnameFromASecureZoneIntoABogusZoneIsBogus() throws {
        let zones = try SignedZones(["test.", "good.test.", "broken.test."], anchored: ["test."])
        let broken = try #require(WireName("broken.test"))
        let stranger = try TestKey(zone: "broken.test.")
        let cname = DNSSECRecord(owner: try #require(WireName("www.good.test")), type: DNSSECRecord.Kind.cname, ttl: 3600,
                                 rdata: try #require(WireName("www.broken.test")).wire)
        let answer = try zones.signed([cname], by: "good.test.") + zones.signed([try aRecord("www.broken.test")], by: "broken.test.")
        let strangerDS = try zones.signed([try stranger.ds(digestType: 2)], by: "test.")
        let verdict = try zones.verdict("www.good.test", answer: answer) { $0 == .ds(broken) ? strangerDS : nil }
        guard case .bogus(let reason)? = verdict else { Issue.record("\(String(describing: verdict))"); return }
        #expect(reason.rrset == "broken.test. DNSKEY")
        #expect(reason.problem == .noKeyMatchesDS)
        #expect(try zones.verdict("www.good.test", answer: answer)?.kind == "secure")
    }

    /// a → b → a, each link signed: the chain is followed a bounded number of times, then bogus (no A).
    @Test func cnameLoopIsBogusNotAHang() throws {
        let zones = try SignedZones(["bad.test."], anchored: ["bad.test."])
        func link(_ from: String, _ to: String) throws -> DNSSECRecord {
            DNSSECRecord(owner: try #require(WireName(from)), type: DNSSECRecord.Kind.cname, ttl: 3600, rdata: try #require(WireName(to)).wire)
        }
        let answer = try zones.signed([try link("a.bad.test", "b.bad.test")], by: "bad.test.")
            + zones.signed([try link("b.bad.test", "a.bad.test")], by: "bad.test.")
        guard case .bogus(let reason)? = try zones.verdict("a.bad.test", answer: answer) else { Issue.record("not bogus"); return }
        #expect(reason.problem == .answerMissing)
    }
}

/// Work bounds on inputs the per-signature caps do not see (issue 28, "within the budget").
@Suite struct DNSSECWorkBoundTests {
    /// One signed NSEC3 RRset of 1 000 records at one owner, each with its own salt and 150 iterations
    /// (so no hash is shared), against an NXDOMAIN for a name of 100 labels: the closest-encloser search
    /// would hash every ancestor with every record (CVE-2023-50868).
    @Test func nsec3RecordsWithManySaltsStayWithinTheBudget() throws {
        let zones = try SignedZones(["bad.test."], anchored: ["bad.test."])
        let owner = "\(try nsec3Label("zz.bad.test.")).bad.test."
        let records = try (0..<1000).map { number in
            try #require(DNSSECRecord(presentation: "\(owner) 60 IN NSEC3 1 0 150 \(String(format: "%04X", number)) 0123456789abcdefghijklmnopqrstuv A RRSIG"))
        }
        let name = (0..<100).map { _ in "a" }.joined(separator: ".") + ".bad.test"
        let started = ContinuousClock.now
        let verdict = try zones.verdict(name, answer: [], authority: try zones.signed(records, by: "bad.test."), claim: .nxdomain)
        let elapsed = ContinuousClock.now - started
        guard case .bogus(let reason)? = verdict else { Issue.record("\(String(describing: verdict))"); return }
        #expect(reason.problem == .capReached(.denialRecordsPerAnswer))
        #expect(elapsed < .seconds(2), "\(elapsed)")
    }

    /// The same with NSEC: 1 000 records at one owner, each covering the name, each compared with every
    /// other for the wildcard; a proof of two NSECs is read as before.
    @Test func nsecRecordsByTheThousandStayWithinTheBudget() throws {
        let zones = try SignedZones(["bad.test."], anchored: ["bad.test."])
        let records = try (0..<1000).map { number in
            try #require(DNSSECRecord(presentation: "a.bad.test. 60 IN NSEC z\(number).bad.test. A RRSIG NSEC"))
        }
        let started = ContinuousClock.now
        let verdict = try zones.verdict("b.bad.test", answer: [], authority: try zones.signed(records, by: "bad.test."), claim: .nxdomain)
        let elapsed = ContinuousClock.now - started
        guard case .bogus(let reason)? = verdict else { Issue.record("\(String(describing: verdict))"); return }
        #expect(reason.problem == .capReached(.denialRecordsPerAnswer))
        #expect(elapsed < .seconds(2), "\(elapsed)")
        let cover = try #require(DNSSECRecord(presentation: "a.bad.test. 60 IN NSEC z.bad.test. A RRSIG NSEC"))
        let apex = try #require(DNSSECRecord(presentation: "bad.test. 60 IN NSEC a.bad.test. NS SOA RRSIG NSEC DNSKEY"))
        let few = try zones.verdict("b.bad.test", answer: [], authority: try zones.signed([cover], by: "bad.test.")
                                        + zones.signed([apex], by: "bad.test."), claim: .nxdomain)
        #expect(few?.kind == "secure", "\(String(describing: few))")
    }

    /// 100 DNSKEYs sharing one key tag and 1 000 DS records with that tag: each pairing is a digest.
    @Test func dsRecordsSharingTheKeysTagStayWithinTheBudget() throws {
        let key = try TestKey(zone: "bad.test.")
        let tag = try #require(DNSKEYData(key.dnskey.rdata)).keyTag
        let impostors = try key.impostors(100)
        let now = nowSeconds()
        let set = try #require(RRset.group(impostors + [key.dnskey] + (try key.sign(impostors + [key.dnskey], inception: now - 3600, expiration: now + 86400))).first)
        let ds = (0..<1000).map { number in
            DNSSECRecord(owner: key.zone, type: DNSSECRecord.Kind.ds, ttl: 3600,
                         rdata: [UInt8(tag >> 8), UInt8(tag & 0xFF), 13, 2] + (0..<32).map { _ in UInt8(truncatingIfNeeded: number) })
        }
        var budget = ValidationBudget(checks: 64)
        let started = ContinuousClock.now
        let keys = ZoneKeys.validate(zone: key.zone, dnskeys: set, ds: ds, now: now, limits: ValidationLimits(), budget: &budget)
        let elapsed = ContinuousClock.now - started
        guard case .bogus(let reason) = keys else { Issue.record("\(keys)"); return }
        #expect(reason.problem == .capReached(.signaturesPerRRset))
        #expect(elapsed < .seconds(2), "\(elapsed)")
        // The real key's DS behind 100 impostors' with its tag: the key cap (4 keys a DS) stops it too.
        var keyBudget = ValidationBudget(checks: 64)
        let behind = ZoneKeys.validate(zone: key.zone, dnskeys: set, ds: [try key.ds(digestType: 2)], now: now,
                                       limits: ValidationLimits(), budget: &keyBudget)
        guard case .bogus(let keyReason) = behind else { Issue.record("\(behind)"); return }
        #expect(keyReason.problem == .capReached(.keysPerSignature))
        // Ahead of them, it matches.
        let set2 = try #require(RRset.group([key.dnskey] + impostors + (try key.sign([key.dnskey] + impostors, inception: now - 3600, expiration: now + 86400))).first)
        guard case .secure = ZoneKeys.validate(zone: key.zone, dnskeys: set2, ds: [try key.ds(digestType: 2)], now: now,
                                               limits: ValidationLimits(), budget: &keyBudget) else { Issue.record("not secure"); return }
    }
}

extension DNSSECWorkBoundTests {
    /// A 64 KiB reply holds about 6 000 A records of one RRset (16 octets each, the owner compressed):
    /// grouping them (duplicates dropped) stays linear.
    @Test func groupingAFullReplysRecordsStaysWithinTheBudget() throws {
        let owner = try #require(WireName("www.bad.test"))
        let records = (0..<6000).map { (number: Int) -> DNSSECRecord in
            let rdata: [UInt8] = [10, 0, UInt8(number >> 8), UInt8(truncatingIfNeeded: number)]
            return DNSSECRecord(owner: owner, type: DNSSECRecord.Kind.a, ttl: 60, rdata: rdata)
        }
        let started = ContinuousClock.now
        let sets = RRset.group(records + records)
        let elapsed = ContinuousClock.now - started
        #expect(sets.count == 1 && sets.first?.records.count == 6000)
        #expect(elapsed < .seconds(1), "\(elapsed)")
    }
}

/// NSEC and NSEC3 records without their fields, handed to the readers that run before any signature is
/// checked (a wildcard's proof, an empty non-terminal's): they cover and list nothing.
@Suite struct DNSSECShortRecordTests {
    @Test(arguments: [[], [3, 0x61], [0x40]] as [[UInt8]])
    func nsecWithoutItsFieldsCoversAndListsNothing(_ rdata: [UInt8]) throws {
        let nsec = DNSSECRecord(owner: try #require(WireName("a.bad.test")), type: DNSSECRecord.Kind.nsec, ttl: 60, rdata: rdata)
        #expect(!NSECRecord.covers(nsec, try #require(WireName("b.bad.test"))))
        #expect(!NSECRecord.lists(nsec, type: DNSSECRecord.Kind.a))
    }

    /// RFC 5155: a SHA-1 NSEC3's next hashed owner is 20 octets (§3.1.7), and a validator ignores NSEC3s
    /// with flags other than 0 or 1 (§8.2). Cut short, or with an empty next hash (which covered every
    /// name after its owner), the record is not read.
    @Test(arguments: [[], [1, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0], [1, 0, 0, 0, 1], [1, 0, 0, 0, 0, 19] + [UInt8](repeating: 0, count: 19),
                      [1, 2, 0, 0, 0, 20] + [UInt8](repeating: 0, count: 20)] as [[UInt8]])
    func nsec3WithoutItsFieldsIsNotRead(_ rdata: [UInt8]) throws {
        let nsec3 = DNSSECRecord(owner: try #require(WireName("\(String(repeating: "0", count: 32)).bad.test")),
                                 type: DNSSECRecord.Kind.nsec3, ttl: 60, rdata: rdata)
        #expect(NSEC3Record(nsec3) == nil)
    }

    @Test func nsec3WithAFullNextHashIsRead() throws {
        let rdata: [UInt8] = [1, 1, 0, 0, 0, 20] + [UInt8](repeating: 0xFF, count: 20)
        let nsec3 = DNSSECRecord(owner: try #require(WireName("\(String(repeating: "0", count: 32)).bad.test")),
                                 type: DNSSECRecord.Kind.nsec3, ttl: 60, rdata: rdata)
        let record = try #require(NSEC3Record(nsec3))
        #expect(record.nextLabel == Array(String(repeating: "v", count: 32).utf8))
        #expect(record.covers(try #require(WireName("b.bad.test"))))
    }
}

extension DNSSECWorkBoundTests {
    /// A DS reply of 1 000 NSEC3 RRsets (unsigned: they are hashed before any is verified), a salt each
    /// and 150 iterations, for a name 12 labels deep: the no-DS proof's closest-encloser search would hash
    /// every ancestor with each.
    @Test func dsReplyOfThousandNSEC3sStaysWithinTheBudget() throws {
        let key = try TestKey(zone: "bad.test.")
        let records = try (0..<1000).map { number in
            try #require(DNSSECRecord(presentation:
                "\(String(format: "%032d", number)).bad.test. 60 IN NSEC3 1 1 150 \(String(format: "%04X", number)) 0123456789abcdefghijklmnopqrstuv A RRSIG"))
        }
        let name = try #require(WireName((0..<10).map { _ in "a" }.joined(separator: ".") + ".bad.test"))
        var budget = ValidationBudget(checks: 64)
        let started = ContinuousClock.now
        let proof = NoDSProof.read(RRset.group(records), name: name, zone: key.zone, keys: [key.dnskey], now: nowSeconds(),
                                   limits: ValidationLimits(), budget: &budget)
        let elapsed = ContinuousClock.now - started
        guard case .bogus(let reason) = proof else { Issue.record("\(proof)"); return }
        #expect(reason.problem == .capReached(.denialRecordsPerAnswer))
        #expect(elapsed < .seconds(2), "\(elapsed)")
    }
}
