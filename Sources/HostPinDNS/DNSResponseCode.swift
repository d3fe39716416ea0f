/// The RCODE of a response HostPin writes (RFC 1035 §4.1.1; NOTAUTH from RFC 8945 §5.2.1; BADVERS from RFC 6891 §9). Closed.
enum DNSResponseCode: UInt16, Sendable, Hashable {
    /// NOERROR: an answer, or NODATA when the answer section is empty (RFC 2308 §2.2).
    case noerror = 0
    /// FORMERR: the query cannot be read (cut short, a bad name, QDCOUNT other than 1).
    case formerr = 1
    /// SERVFAIL: no trusted upstream answered, or a forwarded query got no reply.
    case servfail = 2
    /// NXDOMAIN: the name does not exist (RFC 2308 §2.1), or a rule blocks it.
    case nxdomain = 3
    /// NOTIMP: an opcode other than QUERY.
    case notimp = 4
    /// REFUSED: a class other than IN, a zone transfer, or, without a forwarder, a type the stub forwards.
    case refused = 5
    /// NOTAUTH: a query signed with TSIG, whose key the stub does not hold (RFC 8945 §5.2.1).
    case notauth = 9
    /// BADVERS: an EDNS version other than 0 (RFC 6891 §6.1.3); needs an OPT record (12 bits).
    case badvers = 16
}
