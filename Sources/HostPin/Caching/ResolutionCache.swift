import Synchronization

/// Resolutions kept for their TTL, keyed by normalised name and address family, at most
/// ``Limits/maximumEntries`` of them.
///
/// An entry lives for the resolution's TTL clamped to ``Limits``, measured on a ``MonotonicClock``; a TTL
/// of 0 is never cached whatever the clamps (RFC 1035 §3.2.1: zero means use once). A store that would
/// exceed the entry limit first drops what has expired, else the least recently used entry, so an
/// endless stream of names runs in bounded memory. Thread-safe: the table is split in 16 shards by the
/// name's hash, each behind its own lock, so two threads seldom wait for each other, and no work runs
/// while a lock is held. Recency is kept per shard: the entry evicted is the least recently used of the
/// shard that needs room, which across the cache is approximately the least recently used.
public final class ResolutionCache: Sendable {
    /// Bounds on what the cache keeps: TTL clamps applied before a TTL is used as a lifetime, and the
    /// number of entries.
    public struct Limits: Sendable, Hashable {
        /// The shortest lifetime, seconds; a smaller non-zero TTL is raised to it. Default 0.
        public var minimumTTL: UInt32
        /// The longest lifetime, seconds; a larger TTL is cut to it. Default 86 400 (one day).
        public var maximumTTL: UInt32
        /// The most entries held, one per name and family asked. Storing one more drops expired entries
        /// (each shard is swept for them at most once a second), else the least recently used one. 0 or
        /// less caches nothing. Default 100 000 (about 46 MiB for answers of one address). Stores running
        /// at the same instant on several threads may exceed it by one each until they return.
        public var maximumEntries: Int

        public init(minimumTTL: UInt32 = 0, maximumTTL: UInt32 = 86_400, maximumEntries: Int = 100_000) {
            self.minimumTTL = minimumTTL
            self.maximumTTL = maximumTTL
            self.maximumEntries = maximumEntries
        }

        /// Seconds an answer with `ttl` is kept; 0 means not at all.
        func lifetime(for ttl: UInt32) -> UInt32 {
            ttl == 0 ? 0 : min(max(ttl, minimumTTL), maximumTTL)
        }
    }

    struct Key: Hashable, Sendable {
        let name: HostName
        let family: AddressFamily
    }

    /// The TTL and entry limits in force.
    public let limits: Limits
    private let clock: any MonotonicClock
    private let shards: [Shard] = (0..<16).map { _ in Shard() }
    /// Entries across every shard, counted beside the shards so that a store sees whether the cache is
    /// full without taking every lock. Changed only together with a shard's table, under its lock.
    private let total = Atomic<Int>(0)

    private final class Shard: Sendable {
        let table = Mutex(CacheShard())
    }

    /// The shard `name` belongs to.
    static func shardIndex(for name: HostName) -> Int {
        name.textHash & 15
    }

    /// Creates an empty cache.
    ///
    /// - Parameters:
    ///   - limits: TTL clamps (defaults 0 and 86 400 seconds) and the entry limit (default 100 000).
    ///   - clock: The clock expiry is measured on; `CLOCK_MONOTONIC_COARSE` by default.
    public init(limits: Limits = Limits(), clock: any MonotonicClock = SystemMonotonicClock()) {
        self.limits = limits
        self.clock = clock
    }

    /// The fresh entry for `name` and `family`, marked ``Resolution/Source/cache``, or `nil`. A hit
    /// becomes the most recently used entry; an expired entry is removed.
    public func lookup(_ name: HostName, family: AddressFamily) -> Resolution? {
        let key = CacheShard.Key(name, family)
        let now = clock.nanoseconds()
        let entry = shards[Self.shardIndex(for: name)].table.withLock { table -> CacheShard.Entry? in
            switch table.lookup(key, now: now) {
            case .fresh(let entry):
                return entry
            case .expired:
                total.subtract(1, ordering: .relaxed)
                return nil
            case .absent:
                return nil
            }
        }
        return entry?.resolution
    }

    /// Keeps `resolution` for its clamped TTL; does nothing when that lifetime is 0. When the cache then
    /// holds more than ``Limits/maximumEntries``, expired entries or the least recently used one go.
    public func store(_ resolution: Resolution, family: AddressFamily) {
        let lifetime = limits.lifetime(for: resolution.ttl)
        // Untrusted answers are never cached; a limit of 0 caches nothing.
        guard lifetime > 0, resolution.source != .untrusted, limits.maximumEntries > 0 else { return }
        let now = clock.nanoseconds()
        let entry = CacheShard.Entry(resolution: resolution.from(.cache), family: family,
                                     expiresAt: now + UInt64(lifetime) * 1_000_000_000)
        let home = Self.shardIndex(for: resolution.name)
        let roomMade = shards[home].table.withLock { table -> Bool in
            guard table.insert(entry) else { return true }  // replaced: the count is unchanged
            // Decided under the lock, so each store that takes the count past the limit removes one.
            guard total.add(1, ordering: .relaxed).newValue > limits.maximumEntries else { return true }
            let removed = table.evict(now: now, sparingNewest: true)
            total.subtract(removed, ordering: .relaxed)
            return removed > 0
        }
        guard !roomMade else { return }
        // The home shard holds only the new entry: take one from the next shard that has any.
        for offset in 1..<shards.count {
            let removed = shards[(home + offset) % shards.count].table.withLock { table in
                let removed = table.evict(now: now, sparingNewest: false)
                total.subtract(removed, ordering: .relaxed)
                return removed
            }
            if removed > 0 { return }
        }
    }

    /// The number of entries held, fresh or not yet removed.
    public var count: Int { shards.reduce(0) { sum, shard in sum + shard.table.withLock { $0.count } } }

    /// Drops every entry.
    public func removeAll() {
        for shard in shards {
            shard.table.withLock { table in
                total.subtract(table.count, ordering: .relaxed)
                table.removeAll()
            }
        }
    }
}
