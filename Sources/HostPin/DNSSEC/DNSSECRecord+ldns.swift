import CLDNS

extension DNSSECRecord {
    /// Reads an ldns record through its uncompressed wire form (`ldns_rr2wire`).
    ///
    /// - Returns: `nil` when ldns cannot write it.
    package init?(_ rr: UnsafePointer<ldns_rr>) {
        var bytes: UnsafeMutablePointer<UInt8>?
        var size = 0
        guard ldns_rr2wire(&bytes, rr, Int32(LDNS_SECTION_ANSWER.rawValue), &size) == LDNS_STATUS_OK, let bytes else { return nil }
        defer { free(bytes) }
        let wire = Array(UnsafeBufferPointer(start: bytes, count: size))
        guard let (owner, length) = WireName.read(wire), wire.count >= length + 10 else { return nil }
        func number(_ at: Int, _ count: Int) -> UInt32 { wire[at..<(at + count)].reduce(0) { $0 << 8 | UInt32($1) } }
        let rdlength = Int(number(length + 8, 2))
        guard wire.count == length + 10 + rdlength else { return nil }
        self.init(owner: owner, type: UInt16(number(length, 2)), dnsClass: UInt16(number(length + 2, 2)),
                  ttl: number(length + 4, 4), rdata: Array(wire[(length + 10)...]))
    }

    /// Parses one record in presentation form (a zone file line) with ldns (`ldns_rr_new_frm_str`).
    ///
    /// - Returns: `nil` when ldns does not take the line as a record.
    package init?(presentation line: String) {
        var rr: UnsafeMutablePointer<ldns_rr>?
        guard ldns_rr_new_frm_str(&rr, line, 3600, nil, nil) == LDNS_STATUS_OK, let rr else { return nil }
        defer { ldns_rr_free(rr) }
        self.init(rr)
    }

    /// The record as a new `ldns_rr` (`ldns_wire2rr`), which the caller frees with `ldns_rr_free`.
    ///
    /// - Returns: `nil` when ldns cannot read the RDATA as its type says (random bytes in a DNSKEY or
    ///   RRSIG): such a record never verifies.
    package func ldnsRecord() -> UnsafeMutablePointer<ldns_rr>? {
        let bytes = wire
        var rr: UnsafeMutablePointer<ldns_rr>?
        var position = 0
        let status = bytes.withUnsafeBufferPointer {
            ldns_wire2rr(&rr, $0.baseAddress, $0.count, &position, LDNS_SECTION_ANSWER)
        }
        guard status == LDNS_STATUS_OK, position == bytes.count else {
            if let rr { ldns_rr_free(rr) }
            return nil
        }
        return rr
    }
}
