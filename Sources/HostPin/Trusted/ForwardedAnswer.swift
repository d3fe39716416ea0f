/// What ``TrustedResolver/forwardValidated(_:)`` returns: the upstream's reply to relay and what DNSSEC
/// validation found for it — what the DNS stub needs to set AD (RFC 6840 §5.8), pass the RRSIGs and
/// NSEC/NSEC3 records to a client that sent DO, or answer SERVFAIL with an Extended DNS Error.
public struct ForwardedAnswer: Sendable, Hashable {
    /// The reply in wire format (RFC 1035 §4) as received: RCODE NOERROR or NXDOMAIN with its answer,
    /// authority and additional sections. With validation on, the query carried DO and CD, so the reply
    /// holds the RRSIGs and the NSEC/NSEC3 proof the validator checked (a stub strips them for a client
    /// that did not set DO, RFC 4035 §3.2.1). Its ID is the one HostPin sent, not the client's.
    public let reply: [UInt8]
    /// What validation found; `nil` when it did not run (``DNSSECMode/off``, RRSIG and meta-type
    /// questions). ``DNSSECStatus/bogus(_:)`` only in ``DNSSECMode/report`` mode.
    public let dnssec: DNSSECStatus?
    /// For a secure answer, the seconds it may be kept at most (every signature's original TTL and expiry,
    /// RFC 4035 §5.3.3); the reply's own TTLs are not rewritten. `nil` otherwise.
    public let secureTTL: UInt32?
    /// Why validation found the reply insecure, when it did; `nil` otherwise. The stub reads it for
    /// Extended DNS Error 27 (RFC 9276 §3.2).
    package var insecurity: InsecureReason?

    public init(reply: [UInt8], dnssec: DNSSECStatus? = nil, secureTTL: UInt32? = nil) {
        self.reply = reply
        self.dnssec = dnssec
        self.secureTTL = secureTTL
    }
}
