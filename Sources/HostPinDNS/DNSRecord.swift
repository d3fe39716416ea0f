import HostPin

/// One resource record of an answer HostPin writes, class IN.
struct DNSRecord: Sendable, Hashable {
    /// Whose record it is.
    enum Owner: Sendable, Hashable {
        /// The question's name, written exactly as the client asked it (its letter case kept).
        case question
        /// Another name, in presentation form (`www.example.test`; the root is the empty string): a CNAME
        /// target down the chain, or the zone of an SOA record.
        case name(String)
    }

    /// The record's data.
    enum Data: Sendable, Hashable {
        /// A (IPv4) or AAAA (IPv6), by the address's family.
        case address(IPAddress)
        /// CNAME: the canonical name, in presentation form.
        case canonicalName(String)
        /// HINFO (RFC 1035 §3.3.2): CPU and OS strings.
        case hostInfo(cpu: String, os: String)
        /// SOA (RFC 1035 §3.3.13): the zone's record, in the authority section of a negative answer.
        case startOfAuthority(SOARecord)

        var type: DNSType {
            switch self {
            case .address(let address): address.family == .v4 ? .a : .aaaa
            case .canonicalName: .cname
            case .hostInfo: .hinfo
            case .startOfAuthority: .soa
            }
        }
    }

    let owner: Owner
    /// Seconds a client may keep the record (RFC 2181 §8).
    let ttl: UInt32
    let data: Data
}
