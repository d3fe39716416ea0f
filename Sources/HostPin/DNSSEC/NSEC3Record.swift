import CLDNS

/// One NSEC3 record (RFC 5155 §3) as HostPin uses it, with the limits ldns 1.8.3 does not keep: only
/// hash algorithm 1 (SHA-1) is handed to ldns (ldns aborts the process on others), each record is hashed
/// with its own parameters (ldns's denial functions take the first record's for all), and more than
/// ``maxIterations`` iterations make the proof insecure (RFC 9276 §3.2, CVE-2023-50868).
package struct NSEC3Record: Sendable, Hashable {
    /// Iterations above this are not hashed: the answer is insecure (EDE 27).
    package static let maxIterations: UInt16 = 150

    package let record: DNSSECRecord
    package let hashAlgorithm: UInt8
    package let iterations: UInt16
    package let salt: [UInt8]

    /// - Returns: `nil` when the RDATA is too short for its fixed fields and salt.
    package init?(_ record: DNSSECRecord) {
        let rdata = record.rdata
        guard record.type == DNSSECRecord.Kind.nsec3, rdata.count >= 5, rdata.count >= 5 + Int(rdata[4]) else { return nil }
        self.record = record
        hashAlgorithm = rdata[0]
        iterations = UInt16(rdata[2]) << 8 | UInt16(rdata[3])
        salt = Array(rdata[5..<(5 + Int(rdata[4]))])
    }

    /// Whether ldns may hash with this record: SHA-1 and at most ``maxIterations``.
    package var isUsable: Bool { hashAlgorithm == 1 && iterations <= Self.maxIterations }

    /// Whether this record's owner is the hash of `name` under its own parameters (`ldns_nsec3_hash_name`).
    package func matches(_ name: WireName) -> Bool {
        guard isUsable, let label = record.owner.labels.first else { return false }
        let wire = name.wire
        guard let rdf = wire.withUnsafeBufferPointer({ ldns_rdf_new_frm_data(LDNS_RDF_TYPE_DNAME, $0.count, $0.baseAddress) })
        else { return false }
        defer { ldns_rdf_deep_free(rdf) }
        guard let hashed = salt.withUnsafeBufferPointer({
            ldns_nsec3_hash_name(rdf, hashAlgorithm, iterations, UInt8(salt.count), $0.baseAddress)
        }) else { return false }
        defer { ldns_rdf_deep_free(hashed) }
        guard let data = ldns_rdf_data(hashed),
              let (hashName, _) = WireName.read(Array(UnsafeBufferPointer(start: data, count: ldns_rdf_size(hashed))))
        else { return false }
        return hashName.labels.first == label
    }

    /// Whether the type bitmap lists `type` (`ldns_nsec3_bitmap`).
    package func lists(_ type: UInt16) -> Bool {
        guard let rr = record.ldnsRecord() else { return false }
        defer { ldns_rr_free(rr) }
        guard let bitmap = ldns_nsec3_bitmap(rr) else { return false }
        return ldns_nsec_bitmap_covers_type(bitmap, ldns_rr_type(rawValue: UInt32(type)))
    }
}
