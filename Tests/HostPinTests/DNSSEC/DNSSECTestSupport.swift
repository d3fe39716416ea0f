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
        for zone in [".", "test.", "example.test.", "badds.example.test.", "expired.example.test.", "unsigned.example.test.",
                     "unsigned.test.", "optout.test.", "child.optout.test."] {
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
            // The parent's DS RRset, or its NODATA proof: the NSEC at the name (RFC 4035 §3.1.4.1), or
            // under NSEC3 the one matching the name, else the closest encloser's and the one covering
            // the next closer name (RFC 5155 §7.2.4, §7.2.7: an opt-out span).
            let parent = zone(of: name.parent ?? .root)
            let ds = rrset(in: parent, owner: name, type: DNSSECRecord.Kind.ds)
            guard ds.isEmpty else { return ds }
            let nsec = rrset(in: parent, owner: name, type: DNSSECRecord.Kind.nsec)
            return nsec.isEmpty ? nsec3Proof(name, in: parent) : nsec
        }
    }

    /// The NSEC3 records of `zone`.
    func nsec3s(in zone: WireName) -> [NSEC3Record] {
        (zones[zone] ?? []).compactMap { $0.type == DNSSECRecord.Kind.nsec3 ? NSEC3Record($0) : nil }
    }

    /// The NSEC3 RRsets (with their RRSIGs) an NSEC3 zone's server sends to deny `name`'s type: the one
    /// matching `name`, or the closest encloser proof (the match of the longest existing ancestor, the
    /// cover of the next closer name) and, with `wildcard`, the match or cover of the wildcard at the
    /// closest encloser (RFC 5155 §7.2.1–§7.2.5).
    func nsec3Proof(_ name: WireName, in zone: WireName, wildcard: Bool = false) -> [DNSSECRecord] {
        let chain = nsec3s(in: zone)
        func records(_ nsec3: NSEC3Record?) -> [DNSSECRecord] {
            nsec3.map { rrset(in: zone, owner: $0.record.owner, type: DNSSECRecord.Kind.nsec3) } ?? []
        }
        if let match = chain.first(where: { $0.matches(name) }) { return records(match) }
        var labels = name.labelCount - 1
        while labels >= zone.labelCount {
            let encloser = name.suffix(labels: labels)
            if let match = chain.first(where: { $0.matches(encloser) }) {
                let nextCloser = name.suffix(labels: labels + 1)
                let star = WireName(labels: [[UInt8(ascii: "*")]] + encloser.labels)
                var proof = records(match) + records(chain.first { $0.covers(nextCloser) })
                if wildcard { proof += records(chain.first { $0.matches(star) || $0.covers(star) }) }
                return proof
            }
            labels -= 1
        }
        return []
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
        // The wildcard at the closest ancestor that has one (in the lab, the closest encloser).
        var encloser = name.parent
        while let parent = encloser, zone.isAncestorOrSelf(of: parent) {
            let wildcard = WireName(labels: [[UInt8(ascii: "*")]] + parent.labels)
            let expanded = rrset(in: zone, owner: wildcard, type: type).map { record -> DNSSECRecord in
                var copy = record
                copy.owner = name
                return copy
            }
            if !expanded.isEmpty {
                let covering = (zones[zone] ?? []).filter { NSECRecord.covers($0, name) }
                let nextCloser = name.suffix(labels: parent.labelCount + 1)
                // NSEC: the record covering the name; NSEC3: the one covering the next closer (RFC 5155 §7.2.6).
                let proof = covering.flatMap { rrset(in: zone, owner: $0.owner, type: DNSSECRecord.Kind.nsec) }
                    + nsec3s(in: zone).filter { $0.covers(nextCloser) }
                        .flatMap { rrset(in: zone, owner: $0.record.owner, type: DNSSECRecord.Kind.nsec3) }
                return (expanded, proof)
            }
            encloser = parent.parent
        }
        return ([], [])
    }

    /// The authority section of a negative answer for `name` in its zone: the SOA and the NSECs a server
    /// sends (RFC 4035 §3.1.3.2): the one at `name` (NODATA), or those covering `name` and the wildcard
    /// of each of its ancestors in the zone (NXDOMAIN; a superset of the two a server picks). A DS
    /// query is the parent's to answer (RFC 4035 §3.1.4.1), so for `type` DS the zone above `name`'s.
    func negativeAuthority(_ name: WireName, type: UInt16 = DNSSECRecord.Kind.a) -> [DNSSECRecord] {
        let zone = type == DNSSECRecord.Kind.ds ? zone(of: name.parent ?? .root) : zone(of: name)
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
        // NSEC3 zones: the NSEC3s that match or cover the name, an ancestor in the zone (the closest
        // encloser and the next closer name) or a wildcard below one — what an authority sends (RFC 5155
        // §7.2), and fewer than the validator's cap on denial records (the whole zone's are more).
        var hashed = names
        var above = name.parent
        while let current = above, zone.isAncestorOrSelf(of: current) {
            hashed.append(current)
            above = current.parent
        }
        for nsec3 in (zones[zone] ?? []) where nsec3.type == DNSSECRecord.Kind.nsec3 && !owners.contains(nsec3.owner) {
            guard let record = NSEC3Record(nsec3), hashed.contains(where: { record.matches($0) || record.covers($0) }) else { continue }
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
