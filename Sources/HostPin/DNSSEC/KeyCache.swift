/// Validated DNSKEY sets by zone, kept for their TTLs across resolutions (Unbound's `val_kcache`), and
/// "bad key" entries for zones whose chain was broken, kept 60 s so a flood of names below a bogus zone
/// is not re-validated each time (Unbound's `BOGUS_KEY_TTL` is the same 60 s). Insecure results are
/// kept 60 s as well: their proof's TTL is not tracked yet.
///
/// A plain value with no lock: its owner (one per upstream, since key sets from an upstream that gave a
/// bogus answer must not serve the next one) guards it. Time is passed in, in seconds on any monotonic
/// clock, so tests move it.
package struct KeyCache: Sendable {
    /// How long a bogus or insecure entry is kept, in seconds.
    package static let badKeyTTL: UInt32 = 60

    private struct Entry: Sendable {
        let keys: ZoneKeys
        let expires: Int64
        let stored: UInt64
    }

    private var entries: [WireName: Entry] = [:]
    private var stores: UInt64 = 0
    /// The most zones kept; past it the oldest stored entry goes first.
    package let capacity: Int

    package init(capacity: Int = 1024) { self.capacity = max(1, capacity) }

    package var count: Int { entries.count }

    /// The entries still fresh at `now`, to seed an ``AnswerValidation``.
    package func keys(at now: Int64) -> [WireName: ZoneKeys] {
        entries.compactMapValues { $0.expires > now ? $0.keys : nil }
    }

    /// The fresh entries at `now` for the zones at or above any of `names` (an answer's owners: every
    /// signer a chain to them may name is one of their ancestors), so seeding a validation costs a few
    /// lookups rather than a copy of the whole cache.
    package func keys(covering names: some Sequence<WireName>, at now: Int64) -> [WireName: ZoneKeys] {
        var found: [WireName: ZoneKeys] = [:]
        var seen: Set<WireName> = []
        for name in names {
            var candidate: WireName? = name
            while let zone = candidate, seen.insert(zone).inserted {
                if let entry = entries[zone], entry.expires > now { found[zone] = entry.keys }
                candidate = zone.parent
            }
        }
        return found
    }

    /// Keeps `zoneKeys` (an ``AnswerValidation/validatedKeys`` after its verdict) from `now`: secure sets for
    /// their TTL, others for ``badKeyTTL``.
    package mutating func store(_ zoneKeys: [WireName: ZoneKeys], at now: Int64) {
        for (zone, keys) in zoneKeys {
            let ttl: UInt32
            switch keys {
            case .secure(_, let keysTTL): ttl = keysTTL
            case .insecure, .bogus: ttl = Self.badKeyTTL
            }
            guard ttl > 0 else { continue }
            stores += 1
            entries[zone] = Entry(keys: keys, expires: now + Int64(ttl), stored: stores)
        }
        entries = entries.filter { $0.value.expires > now }
        while entries.count > capacity, let oldest = entries.min(by: { $0.value.stored < $1.value.stored }) {
            entries[oldest.key] = nil
        }
    }
}
