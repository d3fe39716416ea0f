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
    /// The opt-out flag (RFC 5155 §3.1.2.1): the span to the next hash may hold unsigned delegations
    /// that have no NSEC3 of their own.
    package let optOut: Bool
    package let iterations: UInt16
    package let salt: [UInt8]
    /// The next hashed owner name as the base32hex label an owner carries (RFC 5155 §3.3), lower case.
    package let nextLabel: [UInt8]

    /// - Returns: `nil` when the RDATA is too short for its fixed fields, salt and next hashed owner; when
    ///   its flags are other than 0 or 1 (opt-out), which a validator ignores (RFC 5155 §8.2); or when a
    ///   SHA-1 record's next hashed owner is not 20 octets (§3.1.7: an empty one covered every name after
    ///   the owner).
    package init?(_ record: DNSSECRecord) {
        let rdata = record.rdata
        guard record.type == DNSSECRecord.Kind.nsec3, rdata.count >= 5, rdata[1] & 0xFE == 0,
              rdata.count >= 5 + Int(rdata[4])
        else { return nil }
        self.record = record
        hashAlgorithm = rdata[0]
        optOut = rdata[1] & 1 == 1
        iterations = UInt16(rdata[2]) << 8 | UInt16(rdata[3])
        salt = Array(rdata[5..<(5 + Int(rdata[4]))])
        let lengthAt = 5 + Int(rdata[4])
        guard rdata.count > lengthAt, rdata.count >= lengthAt + 1 + Int(rdata[lengthAt]),
              rdata[0] != 1 || rdata[lengthAt] == 20
        else { return nil }
        nextLabel = Self.base32hex(Array(rdata[(lengthAt + 1)..<(lengthAt + 1 + Int(rdata[lengthAt]))]))
    }

    /// Base32 with the extended hex alphabet, lower case, no padding (RFC 4648 §7), as NSEC3 owner labels
    /// are written; hand-written (ldns's encoder is not in its public headers). Its order is the hashes' order.
    private static func base32hex(_ bytes: [UInt8]) -> [UInt8] {
        let alphabet = Array("0123456789abcdefghijklmnopqrstuv".utf8)
        var output: [UInt8] = []
        var buffer = 0, bits = 0
        for byte in bytes {
            buffer = buffer << 8 | Int(byte)
            bits += 8
            while bits >= 5 {
                output.append(alphabet[(buffer >> (bits - 5)) & 31])
                bits -= 5
            }
        }
        if bits > 0 { output.append(alphabet[(buffer << (5 - bits)) & 31]) }
        return output
    }

    /// Whether ldns may hash with this record: SHA-1 and at most ``maxIterations``.
    package var isUsable: Bool { hashAlgorithm == 1 && iterations <= Self.maxIterations }

    /// Whether this record's owner is the hash of `name` under its own parameters (`ldns_nsec3_hash_name`).
    package func matches(_ name: WireName) -> Bool {
        guard let label = record.owner.labels.first, let hash = hashLabel(of: name) else { return false }
        return hash == label
    }

    /// Whether `name`'s hash lies strictly between this record's owner hash and next hash, the last
    /// record of the chain wrapping round to the first (RFC 5155 §8.3).
    package func covers(_ name: WireName) -> Bool {
        guard let owner = record.owner.labels.first, let hash = hashLabel(of: name), hash != owner else { return false }
        let before = { (one: [UInt8], other: [UInt8]) in one.lexicographicallyPrecedes(other) }
        return before(owner, nextLabel) ? before(owner, hash) && before(hash, nextLabel)
            : before(owner, hash) || before(hash, nextLabel)
    }

    /// `name` hashed with this record's parameters, as a lower-case base32hex label; `nil` when the
    /// record is not usable.
    private func hashLabel(of name: WireName) -> [UInt8]? {
        guard isUsable else { return nil }
        let wire = name.wire
        guard let rdf = wire.withUnsafeBufferPointer({ ldns_rdf_new_frm_data(LDNS_RDF_TYPE_DNAME, $0.count, $0.baseAddress) })
        else { return nil }
        defer { ldns_rdf_deep_free(rdf) }
        guard let hashed = salt.withUnsafeBufferPointer({
            ldns_nsec3_hash_name(rdf, hashAlgorithm, iterations, UInt8(salt.count), $0.baseAddress)
        }) else { return nil }
        defer { ldns_rdf_deep_free(hashed) }
        guard let data = ldns_rdf_data(hashed),
              let (hashName, _) = WireName.read(Array(UnsafeBufferPointer(start: data, count: ldns_rdf_size(hashed))))
        else { return nil }
        return hashName.labels.first
    }

    /// Whether the type bitmap lists `type` (`ldns_nsec3_bitmap`).
    package func lists(_ type: UInt16) -> Bool {
        guard let rr = record.ldnsRecord() else { return false }
        defer { ldns_rr_free(rr) }
        guard let bitmap = ldns_nsec3_bitmap(rr) else { return false }
        return ldns_nsec_bitmap_covers_type(bitmap, ldns_rr_type(rawValue: UInt32(type)))
    }
}
