import Foundation

/// The answer to one resolution: the addresses a name maps to, how HostPin got them, and for how long
/// they may be used.
///
/// A value: copying it copies the answer. `ttl` is in seconds (RFC 2181 §8) and is the smallest TTL on
/// the whole answer chain, CNAME records included; `receivedAt` is wall-clock time, for display and
/// JSON. Expiry inside the cache runs on a monotonic clock, not on `receivedAt`.
public struct Resolution: Sendable, Hashable {
    /// Where the answer came from.
    public enum Source: String, Sendable, Hashable {
        /// Received from a trusted upstream just now.
        case upstream
        /// Served from HostPin's cache while fresh; `ttl` and `receivedAt` are those of the original answer.
        /// What is left of the TTLs is each TTL less ``ResolutionOutcome/age``
        /// (``HostResolver/resolveDetailed(_:family:)``), as `hostpin serve` answers and `hostpin lookup` prints.
        case cache
        /// Served from HostPin's cache after its TTL ran out, because no trusted upstream answered
        /// (serve-stale, RFC 8767 §4): every record's TTL is the stale TTL (30 seconds by default,
        /// ``ResolutionCache/Policy/staleTTL``); `receivedAt` is that of the original answer.
        case stale
        /// A negative answer (NXDOMAIN, NODATA) served from HostPin's cache (RFC 2308 §5); only a
        /// ``NegativeAnswer`` carries it.
        case negativeCache
        /// Addresses a `pin` rule gives for the name: no query was sent.
        case pinned
        /// Answered from the name itself: an IP literal, or `localhost` (RFC 6761 §6.3). No query was sent.
        case literal
        /// A name of a special-use zone that HostPin answers itself (``SpecialUseName``: `onion`, `invalid`,
        /// `local`, `home.arpa`, `resolver.arpa`, the RFC 6303 reverse zones): NXDOMAIN or NODATA with the
        /// zone's synthetic SOA record; only a ``NegativeAnswer`` carries it. No query was sent; never cached.
        case specialUse
        /// Received from a resolver the caller did not trust: the system's or `--local` (for comparison), or
        /// the opted-in fallback after every trusted upstream failed. Never cached.
        case untrusted
    }

    /// The name asked for, normalised.
    public let name: HostName
    /// The addresses, A before AAAA, in the order the upstream sent them; never empty.
    public let addresses: [ResolvedAddress]
    /// The CNAME chain from `name` to the owner of the addresses (RFC 1034 §3.6.2), in order; empty when
    /// `name` owns the addresses itself.
    public let cnames: [CNAMERecord]
    /// Seconds the answer may be used: the minimum TTL over the CNAMEs and address records (a mapping is
    /// only as fresh as its shortest-lived link; RFC 2181 §5.2 sets one TTL per RRset).
    public let ttl: UInt32
    /// The upstream that answered; `nil` for ``Source/literal``.
    public let upstream: Upstream?
    /// How this value was obtained.
    public let source: Source
    /// Wall-clock time the answer was received.
    public let receivedAt: Date
    /// What DNSSEC validation found for the answer (RFC 4035 §4.3); `nil` when it was not validated
    /// (``DNSSECMode/off``, IP literals, pins).
    public let dnssec: DNSSECStatus?
    /// Why validation found the answer insecure, when it did (``DNSSECStatus/insecure``); `nil` otherwise.
    /// Only a reason a client is told of is kept (``InsecureReason/told``: NSEC3 iterations, which
    /// the stub reports as Extended DNS Error 27, RFC 9276 §3.2).
    package var insecurity: InsecureReason?

    /// Creates a resolution; `ttl` is computed as the minimum over `cnames` and `addresses`.
    public init(name: HostName, addresses: [ResolvedAddress], cnames: [CNAMERecord], upstream: Upstream?,
                source: Source, receivedAt: Date, dnssec: DNSSECStatus? = nil) {
        self.name = name
        self.addresses = addresses
        self.cnames = cnames
        var ttl = addresses.first?.ttl ?? 0
        for address in addresses where address.ttl < ttl { ttl = address.ttl }
        for cname in cnames where cname.ttl < ttl { ttl = cname.ttl }
        self.ttl = ttl
        self.upstream = upstream
        self.source = source
        self.receivedAt = receivedAt
        self.dnssec = dnssec
    }

    /// The name that owns the address records: the last CNAME target, or `name`.
    public var canonicalName: String { cnames.last?.target ?? name.text }

    /// The addresses alone, in answer order.
    public var ipAddresses: [IPAddress] { addresses.map(\.address) }

    /// The same answer marked as coming from `source`.
    func from(_ source: Source) -> Resolution {
        var copy = Resolution(name: name, addresses: addresses, cnames: cnames, upstream: upstream, source: source,
                              receivedAt: receivedAt, dnssec: dnssec)
        copy.insecurity = insecurity
        return copy
    }

    /// The same answer served stale (RFC 8767 §4): source ``Source/stale``, every record's TTL `ttl`.
    func stale(ttl: UInt32) -> Resolution {
        var copy = Resolution(name: name, addresses: addresses.map { ResolvedAddress(address: $0.address, ttl: ttl) },
                              cnames: cnames.map { CNAMERecord(alias: $0.alias, target: $0.target, ttl: ttl) },
                              upstream: upstream, source: .stale, receivedAt: receivedAt, dnssec: dnssec)
        copy.insecurity = insecurity
        return copy
    }

    /// The answer for an IP literal or for `localhost` (RFC 6761 §6.3: 127.0.0.1 and ::1), made without a
    /// query; `nil` for every other name. TTL 0: such answers are never cached because they need no query.
    public static func literal(for name: HostName, family: AddressFamily) -> Resolution? {
        let candidates: [IPAddress]
        if let address = name.literalAddress {
            candidates = [address]
        } else if name.isLocalhost {
            candidates = [.loopbackV4, .loopbackV6]
        } else {
            return nil
        }
        return Resolution(
            name: name,
            addresses: candidates.filter { family.admits($0.family) }.map { ResolvedAddress(address: $0, ttl: 0) },
            cnames: [], upstream: nil, source: .literal, receivedAt: Date())
    }
}

/// One address record of an answer: the address and that record's own TTL in seconds.
public struct ResolvedAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address from the A or AAAA record.
    public let address: IPAddress
    /// The record's own TTL in seconds, as received.
    public let ttl: UInt32

    public init(address: IPAddress, ttl: UInt32) {
        self.address = address
        self.ttl = ttl
    }

    public var description: String { address.description }
}

/// One CNAME record of an answer chain (RFC 1034 §3.6.2): `alias` is the owner, `target` the canonical name.
public struct CNAMERecord: Sendable, Hashable {
    /// The record's owner name, e.g. `alias.example.test`.
    public let alias: String
    /// The name it points to, e.g. `www.example.test`.
    public let target: String
    /// The record's own TTL in seconds, as received.
    public let ttl: UInt32

    public init(alias: String, target: String, ttl: UInt32) {
        self.alias = alias
        self.target = target
        self.ttl = ttl
    }
}
