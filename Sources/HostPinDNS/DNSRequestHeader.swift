/// What a response echoes of its query's header (RFC 1035 §4.1.1) and the query's EDNS(0) record.
struct DNSRequestHeader: Sendable, Hashable {
    /// The query's EDNS(0) OPT record (RFC 6891 §6.1.2).
    struct EDNS: Sendable, Hashable {
        /// The largest UDP payload the client can take, in bytes (values below 512 mean 512, §6.2.5).
        let udpPayloadSize: UInt16
        /// The EDNS version; HostPin speaks 0 and answers any other with BADVERS (§6.1.3).
        let version: UInt8
        /// The DO bit (RFC 3225): the client wants the DNSSEC records (RRSIG, NSEC, NSEC3) of what it asks,
        /// and the response echoes it; without it they are left out (RFC 4035 §3.2.1).
        let dnssecOK: Bool
    }

    let id: UInt16
    /// The OPCODE; 0 is QUERY, every other one is answered NOTIMP.
    let opcode: UInt8
    /// RD, copied into the response.
    let recursionDesired: Bool
    /// CD (RFC 4035 §3.1.6), copied into the response: the client validates by itself, so the stub answers
    /// without validating (§3.2.2) — a bogus answer comes back with its records, without AD.
    let checkingDisabled: Bool
    /// AD in the query (RFC 6840 §5.7): the client understands AD, so a secure answer gets it (§5.8)
    /// even without DO.
    var authenticatedData = false
    /// `nil` when the query carries no OPT record: the response then carries none either.
    let edns: EDNS?

    /// OPCODE QUERY (RFC 1035 §4.1.1).
    static let queryOpcode: UInt8 = 0

    /// The query's DO bit (RFC 3225); false without EDNS.
    var dnssecOK: Bool { edns?.dnssecOK ?? false }

    /// Whether a secure answer sets AD: the query had AD or DO (RFC 6840 §5.8), and did not set CD (the
    /// stub then did not validate).
    var wantsAuthenticatedData: Bool { (authenticatedData || dnssecOK) && !checkingDisabled }
}
