import CLDNS

/// Matches DS records to DNSKEYs (RFC 4034 §5.2, RFC 4509 §3): ldns computes the key's digest
/// (`ldns_key_rr2ds` with the DS's digest type) and HostPin compares it with the DS's.
package enum DSMatch {
    /// Digest types HostPin checks: SHA-256 (2) and SHA-384 (4); SHA-1 (1) only in a DS RRset that has
    /// no stronger one (RFC 4509 §3, RFC 8624 §3.3).
    package static func usable(_ ds: [DNSSECRecord]) -> [DNSSECRecord] {
        let parsed = ds.compactMap { record in DSData(record.rdata).map { (record, $0) } }
            .filter { SignatureCheck.isSupported(algorithm: $0.1.algorithm) }
        let strong = parsed.filter { $0.1.digestType == 2 || $0.1.digestType == 4 }
        return (strong.isEmpty ? parsed.filter { $0.1.digestType == 1 } : strong).map(\.0)
    }

    /// Whether `ds` is the digest of `dnskey`: same owner, key tag and algorithm, and ldns's digest of the
    /// key (owner and RDATA, RFC 4034 §5.1.4) equal to the DS's.
    package static func matches(_ ds: DNSSECRecord, _ dnskey: DNSSECRecord) -> Bool {
        guard ds.owner == dnskey.owner, let dsData = DSData(ds.rdata), let keyData = DNSKEYData(dnskey.rdata),
              dsData.keyTag == keyData.keyTag, dsData.algorithm == keyData.algorithm
        else { return false }
        let hash: ldns_hash
        switch dsData.digestType {
        case 1: hash = LDNS_SHA1
        case 2: hash = LDNS_SHA256
        case 4: hash = LDNS_SHA384
        default: return false
        }
        guard let key = dnskey.ldnsRecord() else { return false }
        defer { ldns_rr_free(key) }
        guard let computed = ldns_key_rr2ds(key, hash) else { return false }
        defer { ldns_rr_free(computed) }
        guard let digest = ldns_rr_rdf(computed, 3), let bytes = ldns_rdf_data(digest) else { return false }
        return Array(UnsafeBufferPointer(start: bytes, count: ldns_rdf_size(digest))) == dsData.digest
    }
}
