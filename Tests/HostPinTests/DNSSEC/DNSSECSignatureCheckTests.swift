import CLDNS
import Foundation
import HostPin
import Testing

/// Each check ``SignatureCheck`` adds to ldns's cryptography, on RRsets signed here with ldns.
@Suite struct DNSSECSignatureCheckTests {
    private let day: Int64 = 86400

    private func signed(_ key: TestKey, owner: String = "www.bad.test", inception: Int64? = nil, expiration: Int64? = nil,
                        ttl: UInt32 = 3600) throws -> RRset {
        let now = nowSeconds()
        let records = [try aRecord(owner, ttl: ttl)]
        let signatures = try key.sign(records, inception: inception ?? now - day, expiration: expiration ?? now + 30 * day)
        return try #require(RRset.group(records + signatures).first)
    }

    private func check(_ rrset: RRset, keys: [DNSSECRecord], zone: String = "bad.test",
                       limits: ValidationLimits = ValidationLimits()) throws -> (SignatureCheck.Outcome, Int) {
        var budget = ValidationBudget(checks: limits.checksPerResolution)
        let outcome = SignatureCheck.verify(rrset, zone: try #require(WireName(zone)), keys: keys, now: nowSeconds(),
                                            limits: limits, budget: &budget)
        return (outcome, budget.checksSpent)
    }

    private func problem(_ outcome: SignatureCheck.Outcome) -> BogusReason.Problem? {
        if case .bogus(let reason) = outcome { return reason.problem }
        return nil
    }

    @Test func validSignatureVerifiesWithTTLCappedByOriginalTTL() throws {
        let key = try TestKey(zone: "bad.test.")
        var rrset = try signed(key, ttl: 300)
        rrset.records[0].ttl = 86400 // a server may hand out a TTL above the signed one
        let (outcome, spent) = try check(rrset, keys: [key.dnskey])
        guard case .verified(let verified) = outcome else { Issue.record("\(outcome)"); return }
        #expect(verified.ttl == 300)
        #expect(verified.wildcard == nil)
        #expect(spent == 1)
    }

    @Test func ttlIsCappedByTimeToExpiry() throws {
        let key = try TestKey(zone: "bad.test.")
        let (outcome, _) = try check(try signed(key, expiration: nowSeconds() + 120), keys: [key.dnskey])
        guard case .verified(let verified) = outcome else { Issue.record("\(outcome)"); return }
        #expect(verified.ttl <= 120 && verified.ttl >= 110)
    }

    @Test func changedRecordIsBogus() throws {
        let key = try TestKey(zone: "bad.test.")
        var rrset = try signed(key)
        rrset.records[0].rdata = [127, 0, 0, 66]
        guard case .signatureInvalid = problem(try check(rrset, keys: [key.dnskey]).0) else { Issue.record("not a crypto failure"); return }
    }

    @Test func revokedKeyIsBogus() throws {
        let key = try TestKey(zone: "bad.test.", flags: 257 | 0x80)
        #expect(problem(try check(try signed(key), keys: [key.dnskey]).0) == .revokedKey)
    }

    @Test func keyWithoutZoneFlagIsBogus() throws {
        let key = try TestKey(zone: "bad.test.", flags: 1)
        let rrset = try signed(key)
        let outcome = try check(rrset, keys: [key.dnskey]).0
        #expect(problem(outcome) == .notAZoneKey, "\(rrset.signatures.count) \(outcome)")
    }

    @Test func signerThatIsNotTheZoneBeingValidatedIsBogus() throws {
        let key = try TestKey(zone: "bad.test.")
        let rrset = try signed(key)
        #expect(problem(try check(rrset, keys: [key.dnskey], zone: "www.bad.test").0) == .wrongSigner(try #require(WireName("bad.test"))))
    }

    @Test func signerThatIsNoAncestorOfTheOwnerIsBogus() throws {
        let key = try TestKey(zone: "other.test.")
        let rrset = try signed(key, owner: "www.bad.test")
        #expect(problem(try check(rrset, keys: [key.dnskey], zone: "other.test").0) == .wrongSigner(try #require(WireName("other.test"))))
    }

    @Test func labelsFieldAboveTheOwnersIsBogus() throws {
        let key = try TestKey(zone: "bad.test.")
        var rrset = try signed(key)
        rrset.signatures[0].rdata[3] = 9
        #expect(problem(try check(rrset, keys: [key.dnskey]).0) == .labelsExceedOwner(labels: 9))
    }

    @Test func fewerLabelsThanTheOwnerIsReportedAsWildcardExpansion() throws {
        let key = try TestKey(zone: "bad.test.")
        let signedWildcard = try signed(key, owner: "*.bad.test")
        // The expansion for x.bad.test: same records and signature, the owner asked for.
        let name = try #require(WireName("x.bad.test"))
        func renamed(_ record: DNSSECRecord) -> DNSSECRecord {
            var copy = record
            copy.owner = name
            return copy
        }
        let expanded = RRset(owner: name, type: signedWildcard.type, records: signedWildcard.records.map(renamed),
                             signatures: signedWildcard.signatures.map(renamed))
        let (outcome, _) = try check(expanded, keys: [key.dnskey])
        guard case .verified(let verified) = outcome else { Issue.record("\(outcome)"); return }
        #expect(verified.wildcard == WireName("*.bad.test"))
    }

    @Test func keyTagOrAlgorithmThatMatchesNoKeyIsBogus() throws {
        let key = try TestKey(zone: "bad.test.")
        let other = try TestKey(zone: "bad.test.")
        let tag = try #require(RRSIGData(try signed(key).signatures[0].rdata)).keyTag
        #expect(problem(try check(try signed(key), keys: [other.dnskey]).0) == .noMatchingKey(keyTag: tag, algorithm: 13))
        var rrset = try signed(key)
        rrset.signatures[0].rdata[2] = 8 // same tag, another algorithm
        #expect(problem(try check(rrset, keys: [key.dnskey]).0) == .noMatchingKey(keyTag: tag, algorithm: 8))
    }

    @Test func signatureValidFromTomorrowIsBogus() throws {
        let key = try TestKey(zone: "bad.test.")
        let now = nowSeconds()
        guard case .signatureNotYetValid = problem(try check(try signed(key, inception: now + day, expiration: now + 30 * day), keys: [key.dnskey]).0)
        else { Issue.record("not refused as not yet valid"); return }
    }

    @Test func signatureExpiredYesterdayIsBogus() throws {
        let key = try TestKey(zone: "bad.test.")
        let now = nowSeconds()
        guard case .signatureExpired = problem(try check(try signed(key, inception: now - 30 * day, expiration: now - day), keys: [key.dnskey]).0)
        else { Issue.record("not refused as expired"); return }
    }

    @Test func signatureInsideTheClockSkewAllowanceVerifies() throws {
        let key = try TestKey(zone: "bad.test.")
        let now = nowSeconds()
        let early = try check(try signed(key, inception: now + 1800, expiration: now + 30 * day), keys: [key.dnskey]).0
        let late = try check(try signed(key, inception: now - 30 * day, expiration: now - 1800), keys: [key.dnskey]).0
        guard case .verified = early, case .verified(let lateFacts) = late else { Issue.record("\(early) / \(late)"); return }
        #expect(lateFacts.ttl == 0) // expired: verified inside the allowance, but not to be kept
    }

    @Test func randomBytesInSignatureOrKeyAreBogus() throws {
        let key = try TestKey(zone: "bad.test.")
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            var rrset = try signed(key)
            let covered = rrset.signatures[0].rdata.prefix(2)
            rrset.signatures[0].rdata = Array(covered) + (0..<Int.random(in: 0...120, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(problem(try check(rrset, keys: [key.dnskey]).0) != nil)
            var badKey = key.dnskey
            badKey.rdata = (0..<Int.random(in: 0...80, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(problem(try check(try signed(key), keys: [badKey]).0) != nil)
        }
    }

    @Test func unsupportedAlgorithmIsUnverifiableNotBogus() throws {
        let key = try TestKey(zone: "bad.test.")
        var rrset = try signed(key)
        rrset.signatures[0].rdata[2] = 5 // RSASHA1: not verified by HostPin
        #expect(try check(rrset, keys: [key.dnskey]).0 == .unsupported)
        #expect(!SignatureCheck.isSupported(algorithm: 5) && SignatureCheck.isSupported(algorithm: 13))
    }

    /// KeyTrap: 100 keys sharing the signature's key tag (``TestKey/impostors(_:)``) ahead of the real one.
    @Test func hundredKeysWithOneTagStopAtTheKeyCap() throws {
        let key = try TestKey(zone: "bad.test.")
        let rrset = try signed(key)
        let impostors = try key.impostors(100)
        let started = ContinuousClock.now
        let (outcome, spent) = try check(rrset, keys: impostors + [key.dnskey])
        #expect(problem(outcome) == .capReached(.keysPerSignature))
        #expect(spent == 4)
        #expect(ContinuousClock.now - started < .seconds(2))
    }

    @Test func thousandSignaturesStopAtTheSignatureCap() throws {
        let key = try TestKey(zone: "bad.test.")
        var rrset = try signed(key)
        let real = rrset.signatures[0]
        rrset.signatures = (0..<1000).map { number in
            var copy = real
            copy.rdata[copy.rdata.count - 1] ^= UInt8(truncatingIfNeeded: number | 1)
            copy.rdata[copy.rdata.count - 2] ^= UInt8(truncatingIfNeeded: number >> 8)
            return copy
        } + [real]
        let started = ContinuousClock.now
        let (outcome, spent) = try check(rrset, keys: [key.dnskey])
        #expect(problem(outcome) == .capReached(.signaturesPerRRset))
        #expect(spent == 8)
        var generous = ValidationLimits()
        generous.signaturesPerRRset = 2000
        let (budgeted, budgetSpent) = try check(rrset, keys: [key.dnskey], limits: generous)
        #expect(problem(budgeted) == .capReached(.checksPerResolution))
        #expect(budgetSpent == 64)
        #expect(ContinuousClock.now - started < .seconds(2))
    }
}

/// What ldns 1.8.3 accepts by itself (`ldns_verify_rrsig_time` with one key), so that each check
/// ``SignatureCheck`` adds is shown to be HostPin's and not ldns's.
@Suite struct DNSSECLdnsAloneTests {
    private func ldnsAccepts(_ rrset: RRset, key: DNSSECRecord, at time: Int64) throws -> Bool {
        let list = try #require(ldns_rr_list_new())
        defer { ldns_rr_list_deep_free(list) }
        for record in rrset.records { _ = ldns_rr_list_push_rr(list, try #require(record.ldnsRecord())) }
        let rrsig = try #require(rrset.signatures.first?.ldnsRecord())
        defer { ldns_rr_free(rrsig) }
        let dnskey = try #require(key.ldnsRecord())
        defer { ldns_rr_free(dnskey) }
        return ldns_verify_rrsig_time(list, rrsig, dnskey, time_t(time)) == LDNS_STATUS_OK
    }

    private func signed(_ key: TestKey, owner: String = "www.bad.test") throws -> RRset {
        let now = nowSeconds()
        let records = [try aRecord(owner)]
        return try #require(RRset.group(records + (try key.sign(records, inception: now - 3600, expiration: now + 86400))).first)
    }

    @Test func ldnsAcceptsARevokedKeyAndAKeyWithoutTheZoneFlag() throws {
        for flags: UInt16 in [257 | 0x80, 1] {
            let key = try TestKey(zone: "bad.test.", flags: flags)
            #expect(try ldnsAccepts(try signed(key), key: key.dnskey, at: nowSeconds()))
        }
    }

    @Test func ldnsAcceptsASignerThatIsNoAncestorOfTheOwner() throws {
        let key = try TestKey(zone: "other.test.")
        #expect(try ldnsAccepts(try signed(key, owner: "www.bad.test"), key: key.dnskey, at: nowSeconds()))
    }

    @Test func ldnsHasNoClockSkewAllowance() throws {
        let key = try TestKey(zone: "bad.test.")
        let rrset = try signed(key)
        let expiration = Int64(try #require(RRSIGData(rrset.signatures[0].rdata)).expiration)
        #expect(try !ldnsAccepts(rrset, key: key.dnskey, at: expiration + 60))
    }
}
