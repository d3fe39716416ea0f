/// One DNS reply as received from an upstream, read whole (RFC 1035 §4.1): the header fields HostPin
/// checks and the records it may use. Reading it for an answer is ``AddressAnswer``'s job.
///
/// A value: tests build one directly. Names are lower case without the trailing dot, in presentation form
/// (RFC 1035 §5.1 escapes for odd octets), as ``HostName/text`` and ``CNAMERecord`` write them.
struct DNSReply: Sendable, Hashable {
    /// An entry of the question section (RFC 1035 §4.1.2).
    struct Question: Sendable, Hashable {
        let name: String
        let type: RecordType
        /// QCLASS; 1 is IN, the Internet (RFC 1035 §3.2.4).
        let dnsClass: UInt16
    }

    /// A resource record of the answer or authority section (RFC 1035 §4.1.3), with the data HostPin
    /// reads.
    struct Record: Sendable, Hashable {
        let owner: String
        let type: RecordType
        /// CLASS; 1 is IN.
        let dnsClass: UInt16
        /// Seconds (RFC 2181 §8).
        let ttl: UInt32
        let data: RecordData
    }

    /// The RDATA of the types HostPin reads; every other type is `other`.
    enum RecordData: Sendable, Hashable {
        /// A or AAAA.
        case address(IPAddress)
        /// CNAME: the canonical name.
        case canonicalName(String)
        /// SOA (RFC 1035 §3.3.13): MNAME, RNAME, SERIAL, REFRESH, RETRY, EXPIRE, and MINIMUM, the TTL of
        /// negative answers from the zone (RFC 2308 §4, §5). A negative answer passes it on whole.
        case soa(primaryServer: String, mailbox: String, serial: UInt32, refresh: UInt32, retry: UInt32,
                 expire: UInt32, minimum: UInt32)
        case other
    }

    /// QR: set in a response, clear in a query (RFC 1035 §4.1.1).
    let isResponse: Bool
    /// OPCODE; 0 is a standard query.
    let opcode: UInt8
    /// TC: the message was truncated to fit the transport.
    let isTruncated: Bool
    /// RCODE including the upper 8 bits an EDNS OPT record carries (RFC 6891 §6.1.3): 0 NOERROR,
    /// 2 SERVFAIL, 3 NXDOMAIN, 5 REFUSED, …
    let rcode: UInt16
    let questions: [Question]
    let answers: [Record]
    let authority: [Record]
    /// The answer section's records, RRSIGs included, as the DNSSEC validator reads them; empty unless the
    /// reply was read for validation (``init(wire:readingDNSSEC:)``).
    var signedAnswer: [DNSSECRecord] = []
    /// The authority section's records (NSEC/NSEC3 proofs, SOA, DS, their RRSIGs) as the validator reads
    /// them; empty unless the reply was read for validation.
    var signedAuthority: [DNSSECRecord] = []

    /// CLASS IN (RFC 1035 §3.2.4).
    static let internetClass: UInt16 = 1

    /// Whether this is a whole response to the query that asked `question`: a response (QR, RFC 1035
    /// §4.1.1) to a standard query (OPCODE 0), complete (TC clear: a truncated reply over TCP, or one a
    /// transport hands back truncated, holds part of an answer at best; RFC 7766 §5), with exactly that
    /// question (names compared in the lower case both are read in). What it answers is for the caller to
    /// read; the RCODE is not checked here.
    func isWholeResponse(to question: Question) -> Bool {
        isResponse && opcode == 0 && !isTruncated && questions == [question]
    }
}
