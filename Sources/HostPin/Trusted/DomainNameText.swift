import CLDNS

/// A domain name's presentation form (RFC 1035 §5.1) read from ldns's wire form: what the resolver reads
/// from replies and the DNS stub from queries.
package enum DomainNameText {
    /// `rdf`, an ldns DNAME, as ldns writes it (odd octets escaped), without the root label's final dot
    /// (the root itself is the empty string): `www.example.test`.
    ///
    /// - Parameter keepingCase: Keep each letter's case (the stub echoes a question as asked); otherwise
    ///   lower case.
    /// - Returns: `nil` for an rdf that is no DNAME, or that ldns cannot write (out of memory).
    package static func of(_ rdf: UnsafeMutablePointer<ldns_rdf>?, keepingCase: Bool) -> String? {
        guard let rdf, ldns_rdf_get_type(rdf) == LDNS_RDF_TYPE_DNAME, let data = ldns_rdf_data(rdf) else { return nil }
        if let plain = plainName(UnsafeBufferPointer(start: data, count: ldns_rdf_size(rdf)), keepingCase: keepingCase) {
            return plain
        }
        // A buffer of its own size: ldns_rdf2str would allocate 64 KiB for each name.
        guard let buffer = ldns_buffer_new(256) else { return nil }
        defer { ldns_buffer_free(buffer) }
        guard ldns_rdf2buffer_str_dname(buffer, rdf) == LDNS_STATUS_OK, ldns_buffer_status_ok(buffer) else { return nil }
        var name = String(decoding: UnsafeBufferPointer(start: ldns_buffer_begin(buffer), count: ldns_buffer_position(buffer)),
                          as: UTF8.self)
        if !keepingCase { name = name.lowercased() }
        // The final dot is the root label's separator unless it is escaped ("a\." ends in a label "a.").
        let backslashes = name.dropLast().reversed().prefix { $0 == "\\" }.count
        if name.hasSuffix("."), backslashes % 2 == 0 { name.removeLast() }
        return name
    }

    /// The presentation form of a name whose labels hold only letters, digits, `-` and `_` (every host
    /// name), read from the label sequence ldns has already decompressed and checked; `nil` for any
    /// other name. ldns formats each octet with `printf`, which cost more than the rest of reading a
    /// reply.
    private static func plainName(_ wire: UnsafeBufferPointer<UInt8>, keepingCase: Bool) -> String? {
        var text: [UInt8] = []
        text.reserveCapacity(wire.count)
        var index = 0
        while index < wire.count {
            let length = Int(wire[index])
            if length == 0 { break }
            guard index + length < wire.count else { return nil }
            if !text.isEmpty { text.append(UInt8(ascii: ".")) }
            for byte in wire[(index + 1)...(index + length)] {
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                     UInt8(ascii: "-"), UInt8(ascii: "_"):
                    text.append(byte)
                case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                    text.append(keepingCase ? byte : byte | 0x20)
                default:
                    return nil
                }
            }
            index += length + 1
        }
        return String(decoding: text, as: UTF8.self)
    }
}
