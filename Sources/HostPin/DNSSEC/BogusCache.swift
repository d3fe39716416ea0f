/// Answers found bogus, by question (name and type), kept ``KeyCache/badKeyTTL`` (60 s) so that a flood
/// of queries for a bogus name is not validated again each time (Unbound keeps bogus messages the same
/// way, `val-bogus-ttl`). One per upstream: a name bogus at one upstream is still asked of the next.
///
/// A plain value with no lock, like ``KeyCache``: its owner guards it. Time is in seconds on any
/// monotonic clock.
package struct BogusCache: Sendable {
    private struct Key: Hashable {
        let name: WireName
        let type: UInt16
    }

    private struct Entry {
        let reason: BogusReason
        let expires: Int64
    }

    private var entries: [Key: Entry] = [:]
    /// The most questions kept; past it the expired ones go, then the whole table (a flood of distinct
    /// bogus names costs a validation each, as without this cache).
    package let capacity: Int

    package init(capacity: Int = 4096) { self.capacity = max(1, capacity) }

    package var count: Int { entries.count }

    /// Why `name`/`type` was found bogus, if it was within the last ``KeyCache/badKeyTTL`` seconds.
    package func reason(for name: WireName, type: UInt16, at now: Int64) -> BogusReason? {
        guard let entry = entries[Key(name: name, type: type)], entry.expires > now else { return nil }
        return entry.reason
    }

    /// Keeps `reason` for `name`/`type` from `now`.
    package mutating func store(_ reason: BogusReason, for name: WireName, type: UInt16, at now: Int64) {
        if entries.count >= capacity { entries = entries.filter { $0.value.expires > now } }
        if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
        entries[Key(name: name, type: type)] = Entry(reason: reason, expires: now + Int64(KeyCache.badKeyTTL))
    }
}
