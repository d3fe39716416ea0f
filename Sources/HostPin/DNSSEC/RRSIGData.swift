/// The fields of an RRSIG's RDATA (RFC 4034 §3.1) that the checks ldns leaves out need: the covered
/// type, algorithm, labels, original TTL, validity window, key tag and signer. Read here (a fixed
/// layout) rather than through ldns's rdf accessors, so a check needs no C object.
package struct RRSIGData: Sendable, Hashable {
    package let typeCovered: UInt16
    package let algorithm: UInt8
    /// Labels of the owner the signature was made over, a leading `*` not counted (RFC 4034 §3.1.3).
    package let labels: UInt8
    /// Seconds (RFC 4034 §3.1.4).
    package let originalTTL: UInt32
    /// Seconds since 1970 modulo 2^32 (RFC 4034 §3.1.5).
    package let expiration: UInt32
    package let inception: UInt32
    package let keyTag: UInt16
    package let signer: WireName

    /// - Returns: `nil` when `rdata` is too short for the fixed fields, the signer name is malformed,
    ///   or no signature follows it.
    package init?(_ rdata: [UInt8]) {
        guard rdata.count > 18 else { return nil }
        func number(_ at: Int, _ count: Int) -> UInt32 { rdata[at..<(at + count)].reduce(0) { $0 << 8 | UInt32($1) } }
        guard let (signer, length) = WireName.read(rdata[18...]), rdata.count > 18 + length else { return nil }
        typeCovered = UInt16(number(0, 2))
        algorithm = rdata[2]
        labels = rdata[3]
        originalTTL = number(4, 4)
        expiration = number(8, 4)
        inception = number(12, 4)
        keyTag = UInt16(number(16, 2))
        self.signer = signer
    }
}
