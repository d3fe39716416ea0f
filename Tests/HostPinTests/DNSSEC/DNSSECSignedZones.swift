import CLDNS
import Foundation
import HostPin
import Testing

/// Zones signed here, one ECDSA key each (flags 257, signing every RRset): a zone in `anchored` is a trust
/// anchor by its DNSKEY; any other is reached through a DS in its closest parent among them, signed by it.
struct SignedZones {
    let keys: [WireName: TestKey]
    let anchored: Set<WireName>
    let now = nowSeconds()

    init(_ zones: [String], anchored: [String]) throws {
        var keys: [WireName: TestKey] = [:]
        for zone in zones { keys[try #require(WireName(zone))] = try TestKey(zone: zone) }
        self.keys = keys
        self.anchored = Set(try anchored.map { try #require(WireName($0)) })
    }

    var anchors: TrustAnchors { TrustAnchors(records: anchored.compactMap { keys[$0]?.dnskey }) }

    /// The key of `zone`.
    func key(_ zone: String) throws -> TestKey {
        let name = try #require(WireName(zone))
        return try #require(keys[name], "no key for \(zone)")
    }

    /// `records` and their RRSIGs by the key of `zone`, valid from an hour ago for a day (or as given).
    func signed(_ records: [DNSSECRecord], by zone: String, inception: Int64? = nil, expiration: Int64? = nil) throws -> [DNSSECRecord] {
        let key = try key(zone)
        return records + (try key.sign(records, inception: inception ?? now - 3600, expiration: expiration ?? now + 86400))
    }

    /// What the zones' servers answer: a zone's DNSKEY RRset signed by its key; a DS RRset for a zone
    /// below another, signed by the parent; nothing otherwise.
    func answer(_ request: ChainRequest) -> [DNSSECRecord] {
        switch request {
        case .dnskey(let zone):
            guard let key = keys[zone] else { return [] }
            return (try? signed([key.dnskey], by: zone.description)) ?? []
        case .ds(let zone):
            guard let key = keys[zone], let parent = parentZone(of: zone), let ds = try? key.ds(digestType: 2) else { return [] }
            return (try? signed([ds], by: parent.description)) ?? []
        }
    }

    /// The closest zone of `keys` strictly above `zone`.
    func parentZone(of zone: WireName) -> WireName? {
        var candidate = zone.parent
        while let name = candidate {
            if keys[name] != nil { return name }
            candidate = name.parent
        }
        return nil
    }

    /// Drives a validation of `name`/`type` to its verdict (at most 32 steps), answering with `answer(_:)`
    /// or `override`'s records where it returns some.
    func verdict(_ name: String, type: UInt16 = DNSSECRecord.Kind.a, answer records: [DNSSECRecord],
                 authority: [DNSSECRecord] = [], claim: AnswerValidation.Claim = .answer,
                 override: (ChainRequest) -> [DNSSECRecord]? = { _ in nil }) throws -> DNSSECVerdict? {
        var validation = AnswerValidation(name: try #require(WireName(name)), type: type, answer: records, authority: authority,
                                          claim: claim, anchors: anchors, now: now)
        var step = validation.start()
        for _ in 0..<32 {
            switch step {
            case .verdict(let verdict): return verdict
            case .fetch(let request): step = validation.received(request, records: override(request) ?? answer(request))
            }
        }
        return nil
    }
}

extension TestKey {
    /// The DS ldns computes for the key (`ldns_key_rr2ds`), as ldns-keygen writes it for the lab.
    func ds(digestType: UInt8) throws -> DNSSECRecord {
        let hash: ldns_hash = digestType == 1 ? LDNS_SHA1 : digestType == 2 ? LDNS_SHA256 : LDNS_SHA384
        let rr = try #require(dnskey.ldnsRecord())
        defer { ldns_rr_free(rr) }
        let ds = try #require(ldns_key_rr2ds(rr, hash))
        defer { ldns_rr_free(ds) }
        return try #require(DNSSECRecord(ds))
    }
}

extension TestKey {
    /// `count` DNSKEYs with this key's tag (KeyTrap, CVE-2023-50387): its RDATA with public-key octets
    /// swapped between even positions, which keeps the RFC 4034 Appendix B sum.
    func impostors(_ count: Int) throws -> [DNSSECRecord] {
        let tag = try #require(DNSKEYData(dnskey.rdata)).keyTag
        var impostors: [DNSSECRecord] = []
        var index = 0
        while impostors.count < count, index < 32 * 32 * 4 {
            var copy = dnskey
            let first = 4 + 2 * (index % 32), second = 4 + 2 * ((index / 32 + index % 32 + 1) % 32)
            index += 1
            guard first != second, copy.rdata[first] != copy.rdata[second] else { continue }
            copy.rdata.swapAt(first, second)
            if DNSKEYData(copy.rdata)?.keyTag == tag, !impostors.contains(copy) { impostors.append(copy) }
        }
        try #require(impostors.count == count, "only \(impostors.count) impostors")
        return impostors
    }
}

/// The NSEC3 hash of `name` (SHA-1, RFC 5155 §5) as the base32hex label an NSEC3 owner carries, by ldns.
func nsec3Label(_ name: String, iterations: UInt16 = 0, salt: [UInt8] = []) throws -> String {
    let rdf = try #require(ldns_dname_new_frm_str(name))
    defer { ldns_rdf_deep_free(rdf) }
    let hashed = try #require(salt.withUnsafeBufferPointer { ldns_nsec3_hash_name(rdf, 1, iterations, UInt8(salt.count), $0.baseAddress) })
    defer { ldns_rdf_deep_free(hashed) }
    let text = try #require(ldns_rdf2str(hashed))
    defer { free(text) }
    return String(String(cString: text).lowercased().prefix { $0 != "." })
}
