import Foundation

/// An upstream's "no": the name does not exist (NXDOMAIN) or has no address of the family asked
/// (NODATA), with what a cache and a DNS server need to pass the answer on (RFC 2308).
///
/// ``HostResolver/resolve(_:family:)`` reports a negative answer as ``ResolutionError/nxdomain(_:)`` or
/// ``ResolutionError/nodata(_:_:)``; ``HostResolver/resolveDetailed(_:family:)`` returns this value,
/// which keeps the zone's SOA record (for the authority section of a DNS response and for the
/// negative-caching time) and the CNAME chain that led to the name that does not exist or has no data.
public struct NegativeAnswer: Sendable, Hashable {
    /// Which negative answer.
    public enum Kind: String, Sendable, Hashable {
        /// RCODE 3: the name does not exist (RFC 2308 §2.1).
        case nxdomain
        /// NOERROR without an address of the family asked (RFC 2308 §2.2).
        case nodata
    }

    /// The name asked for, normalised.
    public let name: HostName
    /// The family asked for.
    public let family: AddressFamily
    /// NXDOMAIN or NODATA.
    public let kind: Kind
    /// The CNAME chain from `name` to the name the answer is about, in order; empty when it is `name`.
    public let cnames: [CNAMERecord]
    /// The SOA record from the reply's authority section; `nil` when the upstream sent none (then the
    /// answer is not cached: RFC 2308 §5).
    public let soa: SOARecord?
    /// The upstream that answered; `nil` when no query was sent.
    public let upstream: Upstream?
    /// How this value was obtained: ``Resolution/Source/upstream``, ``Resolution/Source/negativeCache``,
    /// ``Resolution/Source/untrusted`` (the fallback; never cached) or ``Resolution/Source/literal``
    /// (an IP literal or `localhost` without an address of the family; never cached) or
    /// ``Resolution/Source/specialUse`` (a special-use name answered on the host; never cached).
    public let source: Resolution.Source
    /// Wall-clock time the answer was received.
    public let receivedAt: Date
    /// What DNSSEC validation found for the denial and its NSEC/NSEC3 proof (RFC 4035 §5.4); `nil` when it
    /// was not validated (``DNSSECMode/off``, special-use names, literals).
    public let dnssec: DNSSECStatus?
    /// Why validation found the denial insecure, when it did (``DNSSECStatus/insecure``); `nil` otherwise.
    /// Only a reason a client is told of is kept (``InsecureReason/told``: NSEC3 iterations, which
    /// the stub reports as Extended DNS Error 27, RFC 9276 §3.2).
    package var insecurity: InsecureReason?

    public init(name: HostName, family: AddressFamily, kind: Kind, cnames: [CNAMERecord], soa: SOARecord?,
                upstream: Upstream?, source: Resolution.Source, receivedAt: Date, dnssec: DNSSECStatus? = nil) {
        self.name = name
        self.family = family
        self.kind = kind
        self.cnames = cnames
        self.soa = soa
        self.upstream = upstream
        self.source = source
        self.receivedAt = receivedAt
        self.dnssec = dnssec
    }

    /// Seconds the answer may be cached, as received: the smaller of the SOA record's TTL and its
    /// MINIMUM field (RFC 2308 §5), and of the TTLs on the CNAME chain (the answer is only as fresh as
    /// the aliases that led to it, as for ``Resolution/ttl``); 0 without an SOA record.
    public var ttl: UInt32 {
        guard let soa else { return 0 }
        return cnames.reduce(soa.negativeTTL) { min($0, $1.ttl) }
    }

    /// The error ``HostResolver/resolve(_:family:)`` throws for this answer.
    public var error: ResolutionError {
        switch kind {
        case .nxdomain: .nxdomain(name)
        case .nodata: .nodata(name, family)
        }
    }

    /// The same answer marked as coming from `source`.
    func from(_ source: Resolution.Source) -> NegativeAnswer {
        var copy = NegativeAnswer(name: name, family: family, kind: kind, cnames: cnames, soa: soa, upstream: upstream,
                                  source: source, receivedAt: receivedAt, dnssec: dnssec)
        copy.insecurity = insecurity
        return copy
    }
}
