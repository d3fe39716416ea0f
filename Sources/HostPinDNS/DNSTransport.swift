/// How a query arrived, which bounds the size of its response.
public enum DNSTransport: Sendable, Hashable {
    /// A UDP datagram: the response fits in 512 octets (RFC 1035 §4.2.1), or in the client's EDNS(0)
    /// payload size when it sent one, but never more than the server's own (RFC 6891 §6.2.5).
    case udp
    /// A TCP connection (RFC 7766): up to 65 535 octets, the most its 2-octet length prefix counts.
    case tcp

    /// The largest response for a query with `header`, in octets.
    func responseLimit(for header: DNSRequestHeader, udpPayloadSize: UInt16) -> Int {
        switch self {
        case .tcp: Int(UInt16.max)
        case .udp: header.edns.map { max(512, Int(min($0.udpPayloadSize, udpPayloadSize))) } ?? 512
        }
    }
}
