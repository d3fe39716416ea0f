import Foundation

/// A fresh positive cache entry's addresses, read in place: what ``CachingResolver/cachedAddresses(_:family:)``
/// returns instead of building a ``Resolution``. A hit through it allocates nothing: the first address is
/// held inline and the rest, when the answer has more, are the entry's own immutable array, shared
/// (docs/ARCHITECTURE.md, "Cache"). A value like ``Resolution``; the entry may be replaced or removed
/// later without changing it.
///
/// A collection of the answer's addresses, A before AAAA, in the order the upstream sent them; never empty.
public struct CachedAddresses: RandomAccessCollection, Sendable {
    private let leading: ResolvedAddress
    /// The entry's out-of-line parts, when it has any (more addresses, a CNAME chain, a bogus status).
    private let rare: CacheShard.Rare?
    /// The upstream that answered.
    public let upstream: Upstream?
    /// Wall-clock receive time, seconds since 2001 (`Date`'s reference).
    private let received: Double
    /// The entry's DNSSEC status bits (``CacheShard`` keeps all but bogus in two bits of the node).
    private let dnssecFlags: UInt8
    /// Tells this entry from one stored later under the same name and family: a reader that kept
    /// something built from an earlier hit (the DNS stub's encoded replies) compares it to know that the
    /// answer is still the same, without building and comparing the answer.
    package let generation: UInt32
    /// Seconds since the entry was received (its age), and the seconds left of its TTL, on the cache's
    /// monotonic clock at the lookup (``ResolutionOutcome/age``, ``ResolutionOutcome/ttlLeft``).
    public let age: UInt32
    public let ttlLeft: UInt32

    init(first: ResolvedAddress, rare: CacheShard.Rare?, upstream: Upstream?, receivedAt: Double, dnssecFlags: UInt8,
         generation: UInt32, age: UInt32, ttlLeft: UInt32) {
        leading = first
        self.rare = rare
        self.upstream = upstream
        received = receivedAt
        self.dnssecFlags = dnssecFlags
        self.generation = generation
        self.age = age
        self.ttlLeft = ttlLeft
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { 1 + (rare?.more.count ?? 0) }
    /// The number of addresses, at least 1. Not the collection's default, which asks for ``endIndex``
    /// three times through calls (the type is not inlinable into a caller's module).
    public var count: Int { endIndex }

    public subscript(position: Int) -> ResolvedAddress {
        precondition(position >= 0 && position < endIndex, "CachedAddresses index out of range")
        return position == 0 ? leading : rare.unsafelyUnwrapped.more[position - 1]
    }

    /// The CNAME chain from the name to the owner of the addresses (RFC 1034 §3.6.2); empty when the
    /// name owns them itself.
    public var cnames: [CNAMERecord] { rare?.cnames ?? [] }

    /// Wall-clock time the answer was received.
    public var receivedAt: Date { Date(timeIntervalSinceReferenceDate: received) }

    /// What DNSSEC validation found (RFC 4035 §4.3); `nil` when it was not validated.
    public var dnssec: DNSSECStatus? { rare?.dnssec ?? CacheShard.dnssecStatus(dnssecFlags) }

    /// The answer as ``CachingResolver/resolve(_:family:)`` returns it: carrying `name`, source
    /// ``Resolution/Source/cache``. Allocates its address array.
    public func resolution(name: HostName) -> Resolution {
        guard let rare else {
            return Resolution(name: name, addresses: [leading], cnames: [], upstream: upstream, source: .cache,
                              receivedAt: receivedAt, dnssec: CacheShard.dnssecStatus(dnssecFlags))
        }
        var resolution = Resolution(name: name, addresses: [leading] + rare.more, cnames: rare.cnames, upstream: upstream,
                                    source: .cache, receivedAt: receivedAt, dnssec: dnssec)
        resolution.insecurity = rare.insecurity
        return resolution
    }
}
