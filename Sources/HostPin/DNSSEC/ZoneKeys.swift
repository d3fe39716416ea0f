/// The validated DNSKEY set of one zone (Unbound's key entry, `val_kentry`): what the keys of a zone are
/// worth once its DNSKEY RRset has been checked against the DS records above it or a trust anchor.
package enum ZoneKeys: Sendable, Hashable {
    /// The zone's DNSKEYs, trusted for `ttl` seconds.
    case secure(keys: [DNSSECRecord], ttl: UInt32)
    /// The zone is proven unsigned or signed only with algorithms HostPin does not support: its
    /// answers are insecure (RFC 4035 §5.2). `why` says which.
    case insecure(why: InsecureReason)
    /// The chain to the zone is broken: every answer below it is bogus.
    case bogus(BogusReason)

    /// Validates `dnskeys`, the zone's DNSKEY RRset, against DS records already trusted (the parent's,
    /// verified; or an anchor's) and against anchor DNSKEYs: secure when a key that a DS (or anchor key)
    /// matches signs the DNSKEY RRset.
    ///
    /// - Parameters:
    ///   - zone: The zone apex.
    ///   - dnskeys: Its DNSKEY RRset with RRSIGs, `nil` when the upstream returned none.
    ///   - ds: Trusted DS records for `zone`; only ``DSMatch/usable(_:)`` ones count.
    ///   - anchorKeys: Trust-anchor DNSKEY records for `zone` (a file of DNSKEY lines).
    ///   - now: The check time, seconds since 1970.
    /// - Returns: ``insecure(why:)`` when DS or anchor records exist but none has a supported algorithm and
    ///   digest type (bogus when one of them cannot be read); ``bogus(_:)`` when the DNSKEY RRset is missing, no key matches, or no matching key
    ///   verifies the RRset; otherwise ``secure(keys:ttl:)``, the TTL capped by the DS records' TTL.
    package static func validate(zone: WireName, dnskeys: RRset?, ds: [DNSSECRecord], anchorKeys: [DNSSECRecord] = [],
                                 now: Int64, limits: ValidationLimits, budget: inout ValidationBudget) -> ZoneKeys {
        let usableDS = DSMatch.usable(ds)
        let usableAnchorKeys = anchorKeys.filter { DNSKEYData($0.rdata).map { SignatureCheck.isSupported(algorithm: $0.algorithm) } ?? false }
        guard !usableDS.isEmpty || !usableAnchorKeys.isEmpty else {
            // Unsupported algorithms or digests make the zone insecure; records that cannot be read do not.
            if ds.contains(where: { DSData($0.rdata) == nil }) {
                return .bogus(BogusReason(rrset: "\(zone) DS", problem: .malformedDS))
            }
            return .insecure(why: InsecureReason(.unsupportedAlgorithm,
                                                 "\(zone): no DS or anchor with a supported algorithm and digest type"))
        }
        let subject = dnskeys ?? RRset(owner: zone, type: DNSSECRecord.Kind.dnskey, records: [])
        guard let dnskeys, !dnskeys.records.isEmpty else { return .bogus(BogusReason(subject, problem: .dnskeyMissing)) }
        // One DS at a time against the keys with its tag and algorithm, within the KeyTrap caps: keys may
        // share a tag and a DS RRset may be long, and every pairing is a digest.
        var matched: [DNSSECRecord] = []
        var capped: ValidationLimits.Cap?
        for (index, record) in usableDS.enumerated() {
            guard index < limits.signaturesPerRRset else {
                capped = .signaturesPerRRset
                break
            }
            guard let ds = DSData(record.rdata) else { continue }
            let candidates = dnskeys.records.filter { key in
                DNSKEYData(key.rdata).map { $0.keyTag == ds.keyTag && $0.algorithm == ds.algorithm } ?? false
            }
            if candidates.count > limits.keysPerSignature { capped = capped ?? .keysPerSignature }
            for key in candidates.prefix(limits.keysPerSignature) where !matched.contains(key) && DSMatch.matches(record, key) {
                matched.append(key)
            }
        }
        matched += dnskeys.records.filter { key in usableAnchorKeys.contains { $0.rdata == key.rdata } && !matched.contains(key) }
        guard !matched.isEmpty else {
            return .bogus(BogusReason(dnskeys, problem: capped.map { .capReached($0) } ?? .noKeyMatchesDS))
        }
        switch SignatureCheck.verify(dnskeys, zone: zone, keys: matched, now: now, limits: limits, budget: &budget) {
        case .verified(let verified):
            let ttl = ([verified.ttl] + usableDS.map(\.ttl)).min()!
            return .secure(keys: dnskeys.records, ttl: ttl)
        case .unsupported:
            return .bogus(BogusReason(dnskeys, problem: .noSupportedSignature))
        case .bogus(let reason):
            return .bogus(reason)
        }
    }
}
