import CLDNS
import Foundation
import HostPin
import HostPinTestSupport
import Testing

/// The signed lab's zones (`.lab/signed/*.zone`, made by scripts/lab-sign at `scripts/lab up`), read with
/// ldns, answering an ``AnswerValidation``'s requests as the lab's NSD would: DNSKEY from the zone's
/// own file, DS from its parent's, answers from the deepest zone holding the name.
struct LabZones {
    /// Records by zone apex.
    var zones: [WireName: [DNSSECRecord]] = [:]

    /// The zones of the running lab (beside LAB_TRUST_ANCHOR), and its trust anchor.
    static func current() throws -> (zones: LabZones, anchors: TrustAnchors) {
        let lab = try Lab.current()
        let anchor = try #require(lab.trustAnchor, "the lab predates the signed world: scripts/lab down; scripts/lab up")
        let directory = URL(fileURLWithPath: anchor).deletingLastPathComponent()
        var zones = LabZones()
        for zone in [".", "test.", "example.test.", "badds.example.test.", "expired.example.test.", "unsigned.example.test."] {
            let file = zone == "." ? "root.zone" : String(zone.dropLast()) + ".zone"
            zones.zones[try #require(WireName(zone))] = try read(directory.appendingPathComponent(file).path)
        }
        return (zones, try TrustAnchors.load(path: anchor))
    }

    /// Every record of a zone file, SOA included, through `ldns_zone_new_frm_fp`.
    static func read(_ path: String) throws -> [DNSSECRecord] {
        let file = try #require(fopen(path, "r"), "cannot open \(path)")
        defer { fclose(file) }
        var zone: UnsafeMutablePointer<ldns_zone>?
        let status = ldns_zone_new_frm_fp(&zone, file, nil, 3600, LDNS_RR_CLASS_IN)
        try #require(status == LDNS_STATUS_OK, "ldns cannot read \(path): \(String(cString: ldns_get_errorstr_by_id(status)))")
        defer { ldns_zone_deep_free(zone) }
        var records: [DNSSECRecord] = []
        if let soa = ldns_zone_soa(zone), let record = DNSSECRecord(soa) { records.append(record) }
        let list = ldns_zone_rrs(zone)
        for index in 0..<ldns_rr_list_rr_count(list) {
            records.append(try #require(DNSSECRecord(ldns_rr_list_rr(list, index))))
        }
        return records
    }

    /// The records of `zone` with `owner` and `type`, and the RRSIGs over them.
    func rrset(in zone: WireName, owner: WireName, type: UInt16) -> [DNSSECRecord] {
        (zones[zone] ?? []).filter { $0.owner == owner && ($0.type == type || $0.typeCovered == type) }
    }

    /// The deepest zone at or above `name`.
    func zone(of name: WireName) -> WireName {
        var candidate: WireName? = name
        while let zone = candidate {
            if zones[zone] != nil { return zone }
            candidate = zone.parent
        }
        return .root
    }

    /// What the lab answers for `request`.
    func answer(_ request: ChainRequest) -> [DNSSECRecord] {
        switch request {
        case .dnskey(let zone): return rrset(in: zone, owner: zone, type: DNSSECRecord.Kind.dnskey)
        case .ds(let name):
            // The parent's DS RRset, or its NODATA proof: the NSEC at the name (RFC 4035 §3.1.4.1).
            let parent = zone(of: name.parent ?? .root)
            let ds = rrset(in: parent, owner: name, type: DNSSECRecord.Kind.ds)
            return ds.isEmpty ? rrset(in: parent, owner: name, type: DNSSECRecord.Kind.nsec) : ds
        }
    }

    /// The answer and authority sections for `name`/`type`: its RRset or CNAME, or the expansion of the
    /// wildcard `*.` + its parent with the NSEC records of the zone that cover `name` (the proof a
    /// server sends with an expansion, RFC 4035 §3.1.3.3).
    func positiveAnswer(_ name: WireName, type: UInt16) -> (answer: [DNSSECRecord], authority: [DNSSECRecord]) {
        var answer: [DNSSECRecord] = [], authority: [DNSSECRecord] = []
        var current = name
        for _ in 0..<8 {
            let (records, proof) = hop(current, type: type)
            answer += records
            authority += proof
            guard let cname = records.first(where: { $0.type == DNSSECRecord.Kind.cname }),
                  let target = WireName.read(cname.rdata)?.name
            else { break }
            current = target
        }
        return (answer, authority)
    }

    /// One name's RRset (or CNAME, or wildcard expansion with its proof).
    private func hop(_ name: WireName, type: UInt16) -> (answer: [DNSSECRecord], authority: [DNSSECRecord]) {
        let zone = zone(of: name)
        let exact = rrset(in: zone, owner: name, type: type) + rrset(in: zone, owner: name, type: DNSSECRecord.Kind.cname)
        if !exact.isEmpty { return (exact, []) }
        guard let parent = name.parent else { return ([], []) }
        let wildcard = WireName(labels: [[UInt8(ascii: "*")]] + parent.labels)
        let expanded = rrset(in: zone, owner: wildcard, type: type).map { record -> DNSSECRecord in
            var copy = record
            copy.owner = name
            return copy
        }
        let covering = (zones[zone] ?? []).filter { NSECRecord.covers($0, name) }
        let proof = covering.flatMap { rrset(in: zone, owner: $0.owner, type: DNSSECRecord.Kind.nsec) }
        return (expanded, proof)
    }

    /// The authority section of a negative answer for `name` in its zone: the SOA and the NSECs a server
    /// sends (RFC 4035 §3.1.3.2): the one at `name` (NODATA), or those covering `name` and the wildcard
    /// of each of its ancestors in the zone (NXDOMAIN; a superset of the two a server picks).
    func negativeAuthority(_ name: WireName) -> [DNSSECRecord] {
        let zone = zone(of: name)
        var names = [name]
        var ancestor = name.parent
        while let current = ancestor, zone.isAncestorOrSelf(of: current) {
            names.append(WireName(labels: [[UInt8(ascii: "*")]] + current.labels))
            ancestor = current.parent
        }
        let nsecs = (zones[zone] ?? []).filter { nsec in
            nsec.type == DNSSECRecord.Kind.nsec && names.contains { nsec.owner == $0 || NSECRecord.covers(nsec, $0) }
        }
        var owners: [WireName] = []
        for nsec in nsecs where !owners.contains(nsec.owner) { owners.append(nsec.owner) }
        // NSEC3 zones: every NSEC3 of the zone (the proof picks the record matching the name's hash).
        for nsec3 in (zones[zone] ?? []) where nsec3.type == DNSSECRecord.Kind.nsec3 && !owners.contains(nsec3.owner) {
            owners.append(nsec3.owner)
        }
        return rrset(in: zone, owner: zone, type: DNSSECRecord.Kind.soa)
            + owners.flatMap { rrset(in: zone, owner: $0, type: DNSSECRecord.Kind.nsec) + rrset(in: zone, owner: $0, type: DNSSECRecord.Kind.nsec3) }
    }

    /// Drives `validation` to its verdict, answering each request with `answer(request)` (or `override`'s
    /// records where it returns some), at most 32 steps.
    func run(_ validation: inout AnswerValidation,
             override: (ChainRequest) -> [DNSSECRecord]? = { _ in nil }) -> (verdict: DNSSECVerdict?, requests: [ChainRequest]) {
        var requests: [ChainRequest] = []
        var step = validation.start()
        for _ in 0..<32 {
            switch step {
            case .verdict(let verdict): return (verdict, requests)
            case .fetch(let request):
                requests.append(request)
                step = validation.received(request, records: override(request) ?? answer(request))
            }
        }
        return (nil, requests)
    }
}

/// A zone key made with ldns (ECDSA P-256) that signs RRsets for the bad-input tests.
final class TestKey {
    let zone: WireName
    let flags: UInt16
    let dnskey: DNSSECRecord
    private let key: UnsafeMutablePointer<ldns_key>

    deinit { ldns_key_deep_free(key) }

    init(zone: String, flags: UInt16 = 257) throws {
        self.zone = try #require(WireName(zone))
        self.flags = flags
        key = try #require(ldns_key_new_frm_algorithm(LDNS_SIGN_ECDSAP256SHA256, 256))
        ldns_key_set_flags(key, flags)
        ldns_key_set_pubkey_owner(key, ldns_dname_new_frm_str(zone))
        let rr = try #require(ldns_key2rr(key))
        defer { ldns_rr_free(rr) }
        // ldns_sign_public writes the key's stored tag, which ldns_key_new_frm_algorithm leaves 0.
        ldns_key_set_keytag(key, ldns_calc_keytag(rr))
        dnskey = try #require(DNSSECRecord(rr))
        // ldns_sign_public signs with zone keys only: a key meant to lack the flag signs as one, under the
        // tag of its published record (the flag is not part of what a signature covers).
        ldns_key_set_flags(key, flags | UInt16(LDNS_KEY_ZONE_KEY))
    }

    /// RRSIGs by this key over `records`, valid from `inception` to `expiration` (seconds since 1970).
    func sign(_ records: [DNSSECRecord], inception: Int64, expiration: Int64) throws -> [DNSSECRecord] {
        ldns_key_set_inception(key, UInt32(truncatingIfNeeded: inception))
        ldns_key_set_expiration(key, UInt32(truncatingIfNeeded: expiration))
        let list = try #require(ldns_rr_list_new())
        defer { ldns_rr_list_deep_free(list) }
        for record in records { _ = ldns_rr_list_push_rr(list, try #require(record.ldnsRecord())) }
        let keys = try #require(ldns_key_list_new())
        // ldns_key_list_free deep-frees the keys it counts: the count is set to 0 first so this key
        // stays ours (ldns_key_list_pop_key cannot: in 1.8.3 it returns the slot past the end and, for
        // the last key, reallocs the array to 0 bytes, which frees it, then keeps the freed pointer).
        defer {
            ldns_key_list_set_key_count(keys, 0)
            ldns_key_list_free(keys)
        }
        _ = ldns_key_list_push_key(keys, key)
        let signatures = try #require(ldns_sign_public(list, keys))
        defer { ldns_rr_list_deep_free(signatures) }
        return try (0..<ldns_rr_list_rr_count(signatures)).map { try #require(DNSSECRecord(ldns_rr_list_rr(signatures, $0))) }
    }
}

extension DNSSECVerdict {
    /// The verdict's kind, for comparing with delv's table.
    var kind: String {
        switch self {
        case .secure: "secure"
        case .insecure: "insecure"
        case .bogus: "bogus"
        case .indeterminate: "indeterminate"
        }
    }
}

/// The current time, seconds since 1970.
func nowSeconds() -> Int64 { Int64(Date().timeIntervalSince1970) }

/// One A record.
func aRecord(_ owner: String, _ address: [UInt8] = [127, 0, 0, 10], ttl: UInt32 = 3600) throws -> DNSSECRecord {
    DNSSECRecord(owner: try #require(WireName(owner)), type: DNSSECRecord.Kind.a, ttl: ttl, rdata: address)
}
