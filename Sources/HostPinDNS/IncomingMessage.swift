/// What a received message is, before anything is resolved: a query to answer, a message to answer
/// with an error RCODE alone, or one that gets no answer at all.
enum IncomingMessage: Sendable, Hashable {
    /// Why a message gets no answer.
    enum DropReason: Sendable, Hashable {
        /// Shorter than the 12-octet header: there is no ID to answer to.
        case noHeader
        /// QR is set: it is a response, and answering responses lets two servers loop.
        case response
    }

    /// A query to answer.
    case query(DNSQuery)
    /// A message answered with `rcode` and no records: FORMERR when it cannot be read past its header,
    /// has QDCOUNT other than 1, more than one OPT record (RFC 6891 §6.1.1) or a TSIG that is not the
    /// last additional record (RFC 8945 §5.2), NOTIMP for an opcode other than QUERY (echoing its
    /// question when it has one that reads).
    case reject(DNSRequestHeader, question: DNSQuestion?, DNSResponseCode)
    /// A message signed with TSIG (RFC 8945), whatever its opcode: the stub holds no keys, so it is
    /// answered NOTAUTH with an unsigned TSIG for the same key, error BADKEY (§5.2.1, §5.3.2).
    case unknownKey(DNSRequestHeader, question: DNSQuestion?, TSIGRecord)
    /// Not answered.
    case drop(DropReason)
}
