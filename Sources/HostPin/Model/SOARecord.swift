/// The SOA record of a zone as an upstream sent it in the authority section of a negative answer
/// (RFC 2308 §3): which zone said "no", and for how long the "no" may be kept (RFC 2308 §5).
///
/// Names are lower case without the trailing dot, in presentation form, as ``CNAMERecord`` writes them;
/// the root zone is the empty string.
public struct SOARecord: Sendable, Hashable {
    /// The zone's name, the record's owner.
    public let zone: String
    /// The SOA record's own TTL in seconds, as received.
    public let ttl: UInt32
    /// MNAME: the zone's primary name server (RFC 1035 §3.3.13).
    public let primaryServer: String
    /// RNAME: the mailbox of the person responsible for the zone, with its `@` written as a dot.
    public let mailbox: String
    /// SERIAL: the zone's version.
    public let serial: UInt32
    /// REFRESH, seconds.
    public let refresh: UInt32
    /// RETRY, seconds.
    public let retry: UInt32
    /// EXPIRE, seconds.
    public let expire: UInt32
    /// MINIMUM, seconds: since RFC 2308 §4, the TTL of the zone's negative answers.
    public let minimum: UInt32

    public init(zone: String, ttl: UInt32, primaryServer: String, mailbox: String, serial: UInt32, refresh: UInt32,
                retry: UInt32, expire: UInt32, minimum: UInt32) {
        self.zone = zone
        self.ttl = ttl
        self.primaryServer = primaryServer
        self.mailbox = mailbox
        self.serial = serial
        self.refresh = refresh
        self.retry = retry
        self.expire = expire
        self.minimum = minimum
    }

    /// Seconds a negative answer carrying this record may be cached: the smaller of the record's TTL and
    /// its MINIMUM field (RFC 2308 §5).
    public var negativeTTL: UInt32 { min(ttl, minimum) }
}
