/// A well-formed standard query: OPCODE QUERY, QR clear, exactly one question (RFC 1035 §4.1).
struct DNSQuery: Sendable, Hashable {
    let header: DNSRequestHeader
    let question: DNSQuestion
}
