import CLDNS

/// The proof a wildcard expansion needs (RFC 4035 §5.3.4): a signed NSEC showing that neither the name
/// asked for nor the next closer name below the wildcard's closest encloser exists. NSEC3 proofs
/// (RFC 5155 §8.8) are not checked yet: an expansion in an NSEC3 zone stays bogus.
package enum WildcardProof {
    /// Whether one of `authority`'s NSEC RRsets, verified with the zone's `keys`, covers both `name` and the
    /// next closer name of the expansion of `wildcard` (`*.` plus the closest encloser).
    ///
    /// ldns says whether an NSEC covers a name (`ldns_nsec_covers_name`, canonical order, RFC 4034 §6.1);
    /// HostPin adds that the NSEC's owner is not the name itself (ldns counts the owner as covered), that
    /// it lies in the zone, and verifies its signature (ldns's denial functions verify none).
    package static func provesNoCloserMatch(name: WireName, wildcard: WireName, zone: WireName, keys: [DNSSECRecord],
                                            authority: [RRset], now: Int64, limits: ValidationLimits,
                                            budget: inout ValidationBudget) -> Bool {
        let encloserLabels = wildcard.labelCount - 1
        guard encloserLabels < name.labelCount else { return false }
        let nextCloser = name.suffix(labels: encloserLabels + 1)
        for nsec in authority where nsec.type == DNSSECRecord.Kind.nsec && zone.isAncestorOrSelf(of: nsec.owner) {
            guard nsec.records.count == 1, let record = nsec.records.first,
                  covers(record, name), covers(record, nextCloser)
            else { continue }
            if case .verified = SignatureCheck.verify(nsec, zone: zone, keys: keys, now: now, limits: limits, budget: &budget) {
                return true
            }
        }
        return false
    }

    private static func covers(_ nsec: DNSSECRecord, _ name: WireName) -> Bool {
        guard nsec.owner != name, let rr = nsec.ldnsRecord() else { return false }
        defer { ldns_rr_free(rr) }
        let wire = name.wire
        guard let rdf = wire.withUnsafeBufferPointer({
            ldns_rdf_new_frm_data(LDNS_RDF_TYPE_DNAME, $0.count, $0.baseAddress)
        }) else { return false }
        defer { ldns_rdf_deep_free(rdf) }
        return ldns_nsec_covers_name(rr, rdf)
    }
}
