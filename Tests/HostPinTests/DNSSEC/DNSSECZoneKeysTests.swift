import Foundation
import HostPin
import Testing

/// DS ↔ DNSKEY matching and the validated DNSKEY set of a zone.
@Suite struct DNSSECZoneKeysTests {
    @Test func dsOfTheKeyMatchesAndAChangedDigestDoesNot() throws {
        let key = try TestKey(zone: "bad.test.")
        for type: UInt8 in [1, 2, 4] {
            var record = try key.ds(digestType: type)
            #expect(DSMatch.matches(record, key.dnskey))
            record.rdata[record.rdata.count - 1] ^= 1
            #expect(!DSMatch.matches(record, key.dnskey))
        }
        #expect(!DSMatch.matches(try key.ds(digestType: 2), try TestKey(zone: "bad.test.").dnskey))
    }

    @Test func sha1IsUsedOnlyWithoutAStrongerDigest() throws {
        let key = try TestKey(zone: "bad.test.")
        let sha1 = try key.ds(digestType: 1), sha256 = try key.ds(digestType: 2), sha384 = try key.ds(digestType: 4)
        #expect(DSMatch.usable([sha1, sha256]) == [sha256])
        #expect(DSMatch.usable([sha1, sha384]) == [sha384])
        #expect(DSMatch.usable([sha1]) == [sha1])
        var gost = sha256
        gost.rdata[3] = 3
        #expect(DSMatch.usable([gost]).isEmpty)
    }

    private func keySet(_ keys: [TestKey], signedBy signers: [TestKey]) throws -> RRset {
        let now = nowSeconds()
        let records = keys.map(\.dnskey)
        let signatures = try signers.flatMap { try $0.sign(records, inception: now - 3600, expiration: now + 86400) }
        return try #require(RRset.group(records + signatures).first)
    }

    private func validate(_ dnskeys: RRset?, ds: [DNSSECRecord], anchorKeys: [DNSSECRecord] = []) throws -> ZoneKeys {
        var budget = ValidationBudget(checks: 64)
        return ZoneKeys.validate(zone: try #require(WireName("bad.test")), dnskeys: dnskeys, ds: ds, anchorKeys: anchorKeys,
                                 now: nowSeconds(), limits: ValidationLimits(), budget: &budget)
    }

    private func isSecure(_ keys: ZoneKeys) -> Bool {
        if case .secure = keys { return true }
        return false
    }

    private func problem(_ keys: ZoneKeys) -> BogusReason.Problem? {
        if case .bogus(let reason) = keys { return reason.problem }
        return nil
    }

    @Test func dnskeySetSignedByTheKeyADSMatchesIsSecure() throws {
        let ksk = try TestKey(zone: "bad.test."), zsk = try TestKey(zone: "bad.test.", flags: 256)
        let set = try keySet([ksk, zsk], signedBy: [ksk])
        #expect(isSecure(try validate(set, ds: [try ksk.ds(digestType: 2)])))
        #expect(isSecure(try validate(set, ds: [], anchorKeys: [ksk.dnskey])))
    }

    @Test func dsOfAKeyThatDoesNotSignTheSetIsBogus() throws {
        let ksk = try TestKey(zone: "bad.test."), zsk = try TestKey(zone: "bad.test.", flags: 256)
        let set = try keySet([ksk, zsk], signedBy: [ksk])
        // The DS matches the ZSK, which is in the set but signs nothing.
        guard case .noMatchingKey = problem(try validate(set, ds: [try zsk.ds(digestType: 2)])) else {
            Issue.record("not bogus for the unsigning key"); return
        }
        #expect(problem(try validate(set, ds: [try TestKey(zone: "bad.test.").ds(digestType: 2)])) == .noKeyMatchesDS)
        #expect(problem(try validate(nil, ds: [try ksk.ds(digestType: 2)])) == .dnskeyMissing)
    }

    @Test func revokedKeyADSMatchesIsBogus() throws {
        let revoked = try TestKey(zone: "bad.test.", flags: 257 | 0x80)
        let set = try keySet([revoked], signedBy: [revoked])
        #expect(problem(try validate(set, ds: [try revoked.ds(digestType: 2)])) == .revokedKey)
    }

    @Test func dsOnlyForAnUnsupportedAlgorithmIsInsecure() throws {
        let ksk = try TestKey(zone: "bad.test.")
        var unsupported = try ksk.ds(digestType: 2)
        unsupported.rdata[2] = 5 // RSASHA1
        guard case .insecure = try validate(try keySet([ksk], signedBy: [ksk]), ds: [unsupported]) else {
            Issue.record("not insecure"); return
        }
    }

    @Test func randomBytesInDSOrDNSKEYAreBogus() throws {
        let ksk = try TestKey(zone: "bad.test.")
        let good = try ksk.ds(digestType: 2)
        for _ in 0..<50 {
            var randomDS = good
            randomDS.rdata = Array(good.rdata.prefix(4)) + (0..<Int.random(in: 0...60)).map { _ in UInt8.random(in: 0...255) }
            #expect(problem(try validate(try keySet([ksk], signedBy: [ksk]), ds: [randomDS])) != nil)
            var set = try keySet([ksk], signedBy: [ksk])
            set.records[0].rdata = (0..<Int.random(in: 0...80)).map { _ in UInt8.random(in: 0...255) }
            #expect(problem(try validate(set, ds: [good])) != nil)
        }
    }
}
