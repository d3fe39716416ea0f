import Foundation
import HostPin

/// What HostPin answers to one query: an RCODE and the answer section. Negative answers carry no SOA
/// in the authority section: a ``Resolution`` failure does not keep the upstream's SOA, so clients do
/// not cache them (RFC 2308 §5).
struct DNSAnswer: Sendable, Hashable {
    let rcode: DNSResponseCode
    let records: [DNSRecord]

    init(rcode: DNSResponseCode, records: [DNSRecord] = []) {
        self.rcode = rcode
        self.records = records
    }

    /// The name does not exist (RFC 2308 §2.1).
    static let nxdomain = DNSAnswer(rcode: .nxdomain)
    /// The name exists without records of the type asked (NOERROR, empty answer: RFC 2308 §2.2).
    static let nodata = DNSAnswer(rcode: .noerror)
    static let servfail = DNSAnswer(rcode: .servfail)
    static let refused = DNSAnswer(rcode: .refused)

    /// The answer to ANY (RFC 8482 §4.2): one synthesised HINFO record, CPU "RFC8482", OS empty, instead
    /// of every record of the name (which would make the stub an amplifier). TTL one hour: the record
    /// never changes.
    static let minimalAny = DNSAnswer(rcode: .noerror, records: [
        DNSRecord(owner: .question, ttl: 3600, data: .hostInfo(cpu: "RFC8482", os: "")),
    ])

    /// The answer for a resolution: its CNAME chain in order, then its addresses, each TTL counted down
    /// to what remains (see ``remainingTTL(_:receivedAt:now:limits:)``).
    ///
    /// - Parameters:
    ///   - resolution: What the resolver returned for the question's name.
    ///   - now: The wall-clock time of the answer.
    ///   - limits: The cache's TTL clamps, so the TTLs given out end when the cache's copy does.
    init(_ resolution: Resolution, now: Date, limits: ResolutionCache.Limits) {
        var records: [DNSRecord] = []
        var owner = DNSRecord.Owner.question
        for cname in resolution.cnames {
            records.append(DNSRecord(owner: owner, ttl: Self.remainingTTL(cname.ttl, receivedAt: resolution.receivedAt, now: now, limits: limits),
                                     data: .canonicalName(cname.target)))
            owner = .name(cname.target)
        }
        for address in resolution.addresses {
            records.append(DNSRecord(owner: owner, ttl: Self.remainingTTL(address.ttl, receivedAt: resolution.receivedAt, now: now, limits: limits),
                                     data: .address(address.address)))
        }
        self.init(rcode: .noerror, records: records)
    }

    /// The answer for a resolution that failed; `nil` for a cancelled one (the server is stopping: no
    /// answer is better than a wrong one).
    init?(_ error: ResolutionError) {
        switch error {
        case .nxdomain: self = .nxdomain
        case .nodata: self = .nodata
        case .cancelled: return nil
        // An upstream failure, a time budget run out, a resolver that cannot work: the client may ask
        // another server. (`badName` cannot happen: the name was parsed before it was resolved.)
        case .upstreamsFailed, .timeout, .noUpstreams, .setupFailed, .badName: self = .servfail
        }
    }

    /// The seconds left of a record's TTL: its TTL as the cache clamps it (so a client keeps it no longer
    /// than HostPin does), less the whole seconds since the answer was received, at least 0.
    ///
    /// Counted on the wall clock, from ``Resolution/receivedAt``: the cache's monotonic expiry is not
    /// visible outside it. A clock stepped back counts nothing; one stepped forward counts too much, so
    /// clients ask again sooner, never later.
    static func remainingTTL(_ ttl: UInt32, receivedAt: Date, now: Date, limits: ResolutionCache.Limits) -> UInt32 {
        let lifetime = ttl == 0 ? 0 : min(max(ttl, limits.minimumTTL), limits.maximumTTL)
        let elapsed = now.timeIntervalSince(receivedAt)
        guard elapsed > 0 else { return lifetime }
        guard elapsed < Double(lifetime) else { return 0 }
        return lifetime - UInt32(elapsed.rounded(.down))
    }
}
