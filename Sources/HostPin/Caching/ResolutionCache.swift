import Synchronization

/// Resolutions kept for their TTL, keyed by normalised name and address family.
///
/// An entry lives for the resolution's TTL clamped to ``Limits``, measured on a ``MonotonicClock``; a TTL
/// of 0 is never cached whatever the clamps (RFC 1035 §3.2.1: zero means use once). Thread-safe: one
/// lock guards the table, and no work runs while it is held.
public final class ResolutionCache: Sendable {
    /// Bounds applied to every TTL before it is used as a lifetime, in seconds.
    public struct Limits: Sendable, Hashable {
        /// The shortest lifetime, seconds; a smaller non-zero TTL is raised to it. Default 0.
        public var minimumTTL: UInt32
        /// The longest lifetime, seconds; a larger TTL is cut to it. Default 86 400 (one day).
        public var maximumTTL: UInt32

        public init(minimumTTL: UInt32 = 0, maximumTTL: UInt32 = 86_400) {
            self.minimumTTL = minimumTTL
            self.maximumTTL = maximumTTL
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

    /// The table's key: just what identifies an entry (32 bytes; a whole `HostName` doubled the table).
    private struct Slot: Hashable {
        let text: String
        let textHash: Int
        let family: AddressFamily

        init(_ name: HostName, _ family: AddressFamily) {
            text = name.text
            textHash = name.textHash
            self.family = family
        }

        static func == (lhs: Slot, rhs: Slot) -> Bool {
            lhs.textHash == rhs.textHash && lhs.family == rhs.family && lhs.text == rhs.text
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(textHash)
            hasher.combine(family)
        }
    }

    /// A class, so the table's slots hold one pointer each (a dictionary keeps a quarter of its slots or
    /// more free: inline `Resolution`s made 100 000 names cost 78 MiB).
    private final class Entry: Sendable {
        /// The resolution as a hit returns it: already marked ``Resolution/Source/cache``.
        let resolution: Resolution
        /// Monotonic nanoseconds after which the entry is stale.
        let expiresAt: UInt64

        init(resolution: Resolution, expiresAt: UInt64) {
            self.resolution = resolution
            self.expiresAt = expiresAt
        }
    }

    /// The TTL clamps in force.
    public let limits: Limits
    private let clock: any MonotonicClock
    /// The table, split in 16 shards by the name's hash, each behind its own lock, so two threads
    /// seldom wait for each other.
    private let shards: [Shard] = (0..<16).map { _ in Shard() }

    private final class Shard: Sendable {
        let entries = Mutex<[Slot: Entry]>([:])
    }

    private func shard(for name: HostName) -> Shard {
        shards[name.textHash & 15]
    }

    /// Creates an empty cache.
    ///
    /// - Parameters:
    ///   - limits: TTL clamps; defaults 0 and 86 400 seconds.
    ///   - clock: The clock expiry is measured on; `CLOCK_MONOTONIC_COARSE` by default.
    public init(limits: Limits = Limits(), clock: any MonotonicClock = SystemMonotonicClock()) {
        self.limits = limits
        self.clock = clock
    }

    /// The fresh entry for `name` and `family`, marked ``Resolution/Source/cache``, or `nil`.
    /// An expired entry is removed.
    public func lookup(_ name: HostName, family: AddressFamily) -> Resolution? {
        let key = Slot(name, family)
        let now = clock.nanoseconds()
        let entry = shard(for: name).entries.withLock { entries -> Entry? in
            guard let entry = entries[key] else { return nil }
            if entry.expiresAt <= now {
                entries[key] = nil
                return nil
            }
            return entry
        }
        return entry?.resolution
    }

    /// Keeps `resolution` for its clamped TTL; does nothing when that lifetime is 0.
    public func store(_ resolution: Resolution, family: AddressFamily) {
        let lifetime = limits.lifetime(for: resolution.ttl)
        guard lifetime > 0, resolution.source != .untrusted else { return }  // never cache untrusted answers
        let entry = Entry(resolution: resolution.from(.cache),
                          expiresAt: clock.nanoseconds() + UInt64(lifetime) * 1_000_000_000)
        shard(for: resolution.name).entries.withLock { $0[Slot(resolution.name, family)] = entry }
    }

    /// The number of entries held, fresh or not yet swept.
    public var count: Int { shards.reduce(0) { total, shard in total + shard.entries.withLock { $0.count } } }

    /// Drops every entry.
    public func removeAll() {
        for shard in shards { shard.entries.withLock { $0.removeAll() } }
    }
}
