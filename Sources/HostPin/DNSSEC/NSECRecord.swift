import CLDNS

/// What one NSEC record (RFC 4034 §4) says, read by ldns: which types its owner has
/// (`ldns_nsec_bitmap_covers_type`) and which names it proves absent (`ldns_nsec_covers_name`). The
/// proofs built on it check its signature separately: neither ldns function verifies one.
package enum NSECRecord {
    /// Whether the NSEC's type bitmap lists `type`; `false` for a record ldns cannot read.
    package static func lists(_ nsec: DNSSECRecord, type: UInt16) -> Bool {
        guard nsec.type == DNSSECRecord.Kind.nsec, let rr = nsec.ldnsRecord() else { return false }
        defer { ldns_rr_free(rr) }
        guard let bitmap = ldns_rr_rdf(rr, 1) else { return false }
        return ldns_nsec_bitmap_covers_type(bitmap, ldns_rr_type(rawValue: UInt32(type)))
    }

    /// Whether the NSEC proves `name` absent: `name` lies strictly between its owner and its next name
    /// in canonical order (RFC 4034 §6.1). ldns counts the owner itself as covered; HostPin does not
    /// (the owner exists).
    package static func covers(_ nsec: DNSSECRecord, _ name: WireName) -> Bool {
        guard nsec.type == DNSSECRecord.Kind.nsec, nsec.owner != name, let rr = nsec.ldnsRecord() else { return false }
        defer { ldns_rr_free(rr) }
        let wire = name.wire
        guard let rdf = wire.withUnsafeBufferPointer({
            ldns_rdf_new_frm_data(LDNS_RDF_TYPE_DNAME, $0.count, $0.baseAddress)
        }) else { return false }
        defer { ldns_rdf_deep_free(rdf) }
        return ldns_nsec_covers_name(rr, rdf)
    }
}
