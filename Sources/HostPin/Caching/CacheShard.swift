import Synchronization

/// One shard of a ``ResolutionCache``: its entries by key, and the order they were last used in, for
/// eviction. A plain value with no lock of its own: the cache keeps each shard behind a `Mutex`.
///
/// The recency order is a doubly linked list threaded through ``nodes`` by index, so a hit relinks a few
/// integers and allocates nothing; a removed node goes on a free list and is reused by the next insert.
struct CacheShard {
    /// What identifies an entry (32 bytes; a whole `HostName` doubled the table).
    struct Key: Hashable {
        let text: String
        let textHash: Int
        let family: AddressFamily

        init(_ name: HostName, _ family: AddressFamily) {
            text = name.text
            textHash = name.textHash
            self.family = family
        }

        static func == (lhs: Key, rhs: Key) -> Bool {
            lhs.textHash == rhs.textHash && lhs.family == rhs.family && lhs.text == rhs.text
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(textHash)
            hasher.combine(family)
        }
    }

    /// A class, so each node holds one pointer (a dictionary keeps a quarter of its slots or more free:
    /// inline `Resolution`s made 100 000 names cost 78 MiB).
    final class Entry: Sendable {
        /// What a hit returns.
        enum Content: Sendable {
            /// Addresses, already marked ``Resolution/Source/cache``.
            case positive(Resolution)
            /// NXDOMAIN or NODATA, already marked ``Resolution/Source/negativeCache``. Boxed: its SOA record
            /// would otherwise make every entry, positive ones included, as large as a negative answer.
            indirect case negative(NegativeAnswer)
        }

        let content: Content
        /// The family it answers, so that evicting the entry finds its key.
        let family: AddressFamily
        /// The entry's whole fresh lifetime in nanoseconds: with ``expiresAt`` it gives the entry's age
        /// (an entry restored from a cache file was received before the clock's start, so a stored-at
        /// time could be negative).
        let lifetime: UInt64
        /// Monotonic nanoseconds from which the entry is expired: no longer fresh.
        let expiresAt: UInt64
        /// Monotonic nanoseconds from which a lookup removes the entry: ``expiresAt`` plus the longest
        /// time an expired positive entry may be served stale (RFC 8767 §4); ``expiresAt`` for a negative
        /// entry, which is never served stale.
        let keepUntil: UInt64
        /// Monotonic nanoseconds from which a use of the entry starts a background refresh: the
        /// refresh-ahead point while the entry is fresh; after a failed refresh, when the next may start;
        /// `UInt64.max` while one runs (so one runs per entry at a time) and for entries never refreshed
        /// (negative ones, and every entry when refresh-ahead is off). Read with one relaxed load on every
        /// hit; claimed with a compare-and-exchange.
        let refreshGate: Atomic<UInt64>
        /// Set once an upstream failure was answered with this entry served stale: later uses get the
        /// stale answer at once rather than waiting for the upstreams again, while refreshes run in the
        /// background (RFC 8767 §5, the failure recheck).
        let servingStale = Atomic<Bool>(false)

        init(content: Content, family: AddressFamily, lifetime: UInt64, expiresAt: UInt64, keepUntil: UInt64,
             refreshAt: UInt64) {
            self.content = content
            self.family = family
            self.lifetime = lifetime
            self.expiresAt = expiresAt
            self.keepUntil = keepUntil
            refreshGate = Atomic(refreshAt)
        }

        var name: HostName {
            switch content {
            case .positive(let resolution): resolution.name
            case .negative(let negative): negative.name
            }
        }

        var key: Key { Key(name, family) }

        /// Claims the right to refresh the entry at `now`: true for exactly one caller once
        /// ``refreshGate`` has passed, until ``refreshFailed(now:retryAfter:)``.
        func claimRefresh(now: UInt64) -> Bool {
            let gate = refreshGate.load(ordering: .relaxed)
            return now >= gate && refreshGate.compareExchange(expected: gate, desired: .max, ordering: .relaxed).exchanged
        }

        /// A refresh of the entry failed at `now`: the next may start `retryAfter` nanoseconds later.
        func refreshFailed(now: UInt64, retryAfter: UInt64) {
            refreshGate.store(now &+ retryAfter, ordering: .relaxed)
        }
    }

    /// A place in the recency list: the entry (nil while free) and its neighbours' indices, -1 for none.
    private struct Node {
        var entry: Entry?
        /// Towards the least recently used end; on the free list, the next free node.
        var older: Int32
        /// Towards the most recently used end.
        var newer: Int32
    }

    /// How long after a sweep for expired entries the next may start: a shard full of entries expiring
    /// one after another would otherwise be walked whole on every insert.
    static let sweepInterval: UInt64 = 1_000_000_000

    private var index: [Key: Int32] = [:]
    private var nodes: [Node] = []
    private var newest: Int32 = -1
    private var oldest: Int32 = -1
    private var firstFree: Int32 = -1
    /// No entry expires before this (monotonic nanoseconds): until then a sweep would find nothing.
    private var earliestExpiry = UInt64.max
    /// The earliest time the next sweep may start.
    private var nextSweep: UInt64 = 0

    /// The number of entries held, fresh or not yet removed.
    var count: Int { index.count }

    /// Lookups that found a fresh positive entry.
    var hits = 0
    /// Lookups that found a fresh negative entry.
    var negativeHits = 0
    /// Lookups that found no fresh entry.
    var misses = 0

    /// What ``lookup(_:now:)`` found.
    enum Lookup {
        /// A fresh entry, now the most recently used.
        case fresh(Entry)
        /// An expired entry kept to be served stale, left where it is in the recency order.
        case expired(Entry)
        /// An entry past ``Entry/keepUntil``, now removed.
        case removed
        /// Nothing.
        case absent
    }

    /// Looks `key` up at monotonic time `now`: a fresh entry becomes the most recently used, one past
    /// ``Entry/keepUntil`` is removed.
    ///
    /// - Parameter counting: Count the lookup as a hit, a negative hit or a miss (a caller's lookup, not
    ///   the resolver's second look).
    mutating func lookup(_ key: Key, now: UInt64, counting: Bool = true) -> Lookup {
        guard let position = index[key], let entry = nodes[Int(position)].entry else {
            if counting { misses += 1 }
            return .absent
        }
        if entry.expiresAt <= now {
            if counting { misses += 1 }
            guard entry.keepUntil <= now else { return .expired(entry) }
            index[key] = nil
            release(position)
            return .removed
        }
        if counting {
            if case .negative = entry.content { negativeHits += 1 } else { hits += 1 }
        }
        if position != newest {
            unlink(position)
            linkAsNewest(position)
        }
        return .fresh(entry)
    }

    /// Removes the entry under `key`, if any.
    ///
    /// - Returns: Whether there was one.
    mutating func remove(_ key: Key) -> Bool {
        guard let position = index[key] else { return false }
        index[key] = nil
        release(position)
        return true
    }

    /// Stores `entry` under its key as the most recently used, replacing an entry already there.
    ///
    /// - Returns: Whether the key is new (the shard holds one entry more).
    @discardableResult
    mutating func insert(_ entry: Entry) -> Bool {
        earliestExpiry = min(earliestExpiry, entry.expiresAt)
        let key = entry.key
        if let position = index[key] {
            nodes[Int(position)].entry = entry
            if position != newest {
                unlink(position)
                linkAsNewest(position)
            }
            return false
        }
        let position: Int32
        if firstFree >= 0 {
            position = firstFree
            firstFree = nodes[Int(position)].older
            nodes[Int(position)].entry = entry
        } else {
            position = Int32(nodes.count)
            nodes.append(Node(entry: entry, older: -1, newer: -1))
        }
        index[key] = position
        linkAsNewest(position)
        return true
    }

    /// Makes room for one entry: removes every expired entry when some may have expired (a sweep, at
    /// most once per ``sweepInterval``), those still kept to be served stale included, else the least
    /// recently used entry.
    ///
    /// - Parameter sparingNewest: Never remove the most recently used entry (the one just inserted).
    /// - Returns: The number of entries removed; 0 when there was nothing to remove.
    mutating func evict(now: UInt64, sparingNewest: Bool) -> Int {
        if now >= earliestExpiry, now >= nextSweep {
            let removed = removeExpired(now: now)
            if removed > 0 { return removed }
        }
        guard oldest >= 0, !(sparingNewest && oldest == newest), let victim = nodes[Int(oldest)].entry else { return 0 }
        index[victim.key] = nil
        release(oldest)
        return 1
    }

    /// Every entry, least recently used first (the order that, stored again one by one, rebuilds the
    /// recency order).
    var entriesOldestFirst: [Entry] {
        var entries: [Entry] = []
        entries.reserveCapacity(index.count)
        var position = oldest
        while position >= 0 {
            if let entry = nodes[Int(position)].entry { entries.append(entry) }
            position = nodes[Int(position)].newer
        }
        return entries
    }

    /// Drops every entry and the memory that held them; the counters stay.
    mutating func removeAll() {
        let (hits, negativeHits, misses) = (self.hits, self.negativeHits, self.misses)
        self = CacheShard()
        (self.hits, self.negativeHits, self.misses) = (hits, negativeHits, misses)
    }

    /// Removes every entry expired at `now`; records when the next sweep may find something.
    private mutating func removeExpired(now: UInt64) -> Int {
        var removed = 0
        var earliest = UInt64.max
        var position = oldest
        while position >= 0 {
            let newer = nodes[Int(position)].newer
            if let entry = nodes[Int(position)].entry {
                if entry.expiresAt <= now {
                    index[entry.key] = nil
                    release(position)
                    removed += 1
                } else {
                    earliest = min(earliest, entry.expiresAt)
                }
            }
            position = newer
        }
        earliestExpiry = earliest
        nextSweep = now + Self.sweepInterval
        return removed
    }

    /// Unlinks the node at `position`, forgets its entry and puts it on the free list.
    private mutating func release(_ position: Int32) {
        unlink(position)
        nodes[Int(position)].entry = nil
        nodes[Int(position)].older = firstFree
        firstFree = position
    }

    private mutating func unlink(_ position: Int32) {
        let (older, newer) = (nodes[Int(position)].older, nodes[Int(position)].newer)
        if older >= 0 { nodes[Int(older)].newer = newer } else { oldest = newer }
        if newer >= 0 { nodes[Int(newer)].older = older } else { newest = older }
    }

    private mutating func linkAsNewest(_ position: Int32) {
        nodes[Int(position)].older = newest
        nodes[Int(position)].newer = -1
        if newest >= 0 { nodes[Int(newest)].newer = position } else { oldest = position }
        newest = position
    }
}
