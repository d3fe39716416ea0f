/// A resource record TYPE or QTYPE (RFC 1035 §3.2.2, §3.2.3), as carried on the wire.
struct DNSType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    let rawValue: UInt16

    init(rawValue: UInt16) {
        self.rawValue = rawValue
    }

    /// An IPv4 address (RFC 1035 §3.4.1).
    static let a = DNSType(rawValue: 1)
    /// The canonical name of an alias (RFC 1035 §3.3.1).
    static let cname = DNSType(rawValue: 5)
    /// The start of a zone's authority (RFC 1035 §3.3.13).
    static let soa = DNSType(rawValue: 6)
    /// Host information (RFC 1035 §3.3.2); the minimal answer to ANY (RFC 8482 §4.2).
    static let hinfo = DNSType(rawValue: 13)
    /// An IPv6 address (RFC 3596 §2.1).
    static let aaaa = DNSType(rawValue: 28)
    /// An incremental zone transfer (RFC 1995).
    static let ixfr = DNSType(rawValue: 251)
    /// A whole-zone transfer (RFC 5936).
    static let axfr = DNSType(rawValue: 252)
    /// Every record of the name, QTYPE 255 (RFC 1035 §3.2.3; answered minimally, RFC 8482).
    static let any = DNSType(rawValue: 255)

    var description: String {
        switch self {
        case .a: "A"
        case .cname: "CNAME"
        case .soa: "SOA"
        case .hinfo: "HINFO"
        case .aaaa: "AAAA"
        case .ixfr: "IXFR"
        case .axfr: "AXFR"
        case .any: "ANY"
        default: "TYPE\(rawValue)"  // RFC 3597 §5
        }
    }
}
