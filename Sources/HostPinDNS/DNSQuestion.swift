/// The one question of a query (RFC 1035 §4.1.2), exactly as the client wrote it.
struct DNSQuestion: Sendable, Hashable {
    /// The name in uncompressed wire form, ending with the root label, in the client's letter case
    /// (echoed as received: resolvers that randomise case check it, the "0x20" defence).
    let wireName: [UInt8]
    /// The name in presentation form as ldns writes it (odd octets escaped, RFC 1035 §5.1), in the
    /// client's case, without the root's final dot; empty for the root itself.
    let name: String
    let type: DNSType
    /// The QCLASS; HostPin answers only IN (1).
    let dnsClass: UInt16

    /// The Internet class, IN (RFC 1035 §3.2.4).
    static let internetClass: UInt16 = 1
}
