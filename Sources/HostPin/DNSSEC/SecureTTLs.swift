/// How long each RRset of a secure answer may be kept: its verified TTL, the smallest of its records'
/// TTLs, its RRSIG's original TTL and the seconds left to that signature's expiration (RFC 4035 §5.3.3).
///
/// Per RRset rather than one figure for the whole answer, so a CNAME chain keeps each link's own TTL as
/// without validation (a 5 s CNAME in front of a 3600 s address does not make the address expire in 5 s),
/// and an inflated TTL on one RRset is cut back to its own signature's.
package struct SecureTTLs: Sendable, Hashable {
    /// The verified TTLs of the answer's RRsets of the asked type (A, AAAA, …), by type; for a denial
    /// (NXDOMAIN, NODATA), under SOA's type, the smallest of its SOA's and its NSEC or NSEC3 RRsets'.
    package private(set) var records: [UInt16: UInt32]
    /// The verified TTL of each CNAME of the chain, by its owner.
    package private(set) var cnames: [WireName: UInt32]

    package init(records: [UInt16: UInt32] = [:], cnames: [WireName: UInt32] = [:]) {
        self.records = records
        self.cnames = cnames
    }

    /// The smallest of them: what a reply relayed whole may be kept for.
    package var shortest: UInt32 { min(records.values.min() ?? .max, cnames.values.min() ?? .max) }

    /// Records `ttl` for the RRset of `type` at `owner` (the smaller when one is there already).
    package mutating func add(_ ttl: UInt32, owner: WireName, type: UInt16) {
        if type == DNSSECRecord.Kind.cname {
            cnames[owner] = min(cnames[owner] ?? .max, ttl)
        } else {
            let key = type == DNSSECRecord.Kind.nsec || type == DNSSECRecord.Kind.nsec3 ? DNSSECRecord.Kind.soa : type
            records[key] = min(records[key] ?? .max, ttl)
        }
    }

    /// Both answers' TTLs (the A and AAAA halves of one name), the smaller where both have one.
    package func merged(with other: SecureTTLs) -> SecureTTLs {
        SecureTTLs(records: records.merging(other.records, uniquingKeysWith: min),
                   cnames: cnames.merging(other.cnames, uniquingKeysWith: min))
    }

    /// The cap for the addresses of `type`, `nil` when none was verified.
    package func addresses(_ type: UInt16) -> UInt32? { records[type] }

    /// The cap for a denial's SOA, `nil` when none was verified.
    package var denial: UInt32? { records[DNSSECRecord.Kind.soa] }

    /// The cap for the CNAME owned by `alias` (presentation form), `nil` when none was verified.
    package func cname(_ alias: String) -> UInt32? {
        WireName(alias).flatMap { cnames[$0] }
    }
}
