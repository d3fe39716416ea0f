import Synchronization

/// Answers kept for their TTL, keyed by normalised name and address family, at most
/// ``Limits/maximumEntries`` of them: addresses (``Resolution``) and, for the time RFC 2308 §5 allows,
/// NXDOMAIN and NODATA (``NegativeAnswer``).
///
/// An entry is fresh for its TTL clamped to ``Limits``, measured on a ``MonotonicClock``; a TTL of 0 is
/// never cached whatever the clamps (RFC 1035 §3.2.1: zero means use once). A negative answer is fresh for
/// the smaller of its SOA record's TTL and MINIMUM field (RFC 2308 §5), at most
/// ``Limits/maximumNegativeTTL``; one without an SOA record is not cached. An expired positive entry is
/// kept for ``Policy/maximumStale`` more, so that a ``CachingResolver`` can serve it stale when no upstream
/// answers (RFC 8767). A store that would exceed the entry limit first drops what has expired (stale
/// entries included), else the least recently used entry, so an endless stream of names runs in bounded
/// memory. Thread-safe: the table is split in 16 shards by the name's hash, each behind its own lock, so
/// two threads seldom wait for each other, and no work runs while a lock is held. Recency is kept per
/// shard, by second chance (CLOCK): the entry evicted is an entry of the shard that needs room not used
/// since eviction last passed it, which across the cache is approximately the least recently used.
public final class ResolutionCache: Sendable {
    /// Bounds on what the cache keeps: TTL clamps applied before a TTL is used as a lifetime, and the
    /// number of entries.
    public struct Limits: Sendable, Hashable {
        /// The shortest lifetime of a positive answer, seconds; a smaller non-zero TTL is raised to it.
        /// Default 0.
        public var minimumTTL: UInt32
        /// The longest lifetime of a positive answer, seconds; a larger TTL is cut to it. Default 86 400
        /// (one day).
        public var maximumTTL: UInt32
        /// The most entries held, one per name and family asked, positive or negative, fresh or kept to be
        /// served stale. Storing one more drops expired entries (each shard is swept for them at most
        /// once a second), else the least recently used one. 0 or less caches nothing. Default 100 000
        /// (about 20 MiB for answers of one address: some 200 bytes each). Stores running at the same
        /// instant on several threads may exceed it by one each until they return.
        public var maximumEntries: Int
        /// The longest lifetime of a negative answer (NXDOMAIN, NODATA), seconds: the smaller of the SOA
        /// record's TTL and MINIMUM is cut to it (RFC 2308 §5 lets a resolver cap it). Default 900
        /// (15 minutes); 0 caches no negative answer.
        public var maximumNegativeTTL: UInt32

        public init(minimumTTL: UInt32 = 0, maximumTTL: UInt32 = 86_400, maximumEntries: Int = 100_000,
                    maximumNegativeTTL: UInt32 = 900) {
            self.minimumTTL = minimumTTL
            self.maximumTTL = maximumTTL
            self.maximumEntries = maximumEntries
            self.maximumNegativeTTL = maximumNegativeTTL
        }

        /// Seconds an answer with `ttl` is kept; 0 means not at all.
        func lifetime(for ttl: UInt32) -> UInt32 {
            ttl == 0 ? 0 : min(max(ttl, minimumTTL), maximumTTL)
        }
    }

    /// What a ``CachingResolver`` does with the cache's entries beyond their TTL: serve-stale (RFC 8767)
    /// and refresh-ahead. Every duration is in whole seconds but ``staleAnswerTimeout``, a `Duration`.
    public struct Policy: Sendable, Hashable {
        /// How long an expired positive entry is kept to be served stale when every upstream fails or the
        /// time budget runs out (RFC 8767 §4, "maximum stale timer"). Default 86 400 (one day; RFC 8767
        /// §5 suggests one to three days). 0 turns serve-stale off: an entry is dropped when it expires.
        public var maximumStale: UInt32
        /// The TTL of every record of a stale answer (RFC 8767 §4 recommends 30). Default 30.
        public var staleTTL: UInt32
        /// After a failed refresh, how long until the next may start (RFC 8767 §5, "failure recheck
        /// timer"): a name served stale is refreshed at most this often, in the background, one refresh
        /// at a time; a fresh entry whose refresh-ahead failed is tried again after it. Default 30.
        public var refreshRetryInterval: UInt32
        /// The part of a positive entry's lifetime after which a use of the entry refreshes it in the
        /// background (refresh-ahead): the caller gets the cached answer at once, one refresh runs per name
        /// at a time, and a refresh that fails leaves the entry as it was. Default 0.8. A value outside
        /// the open interval 0 to 1 (0, 1, or more) turns refresh-ahead off.
        public var refreshAhead: Double
        /// How long a caller waits for the upstreams, when the name's entry has expired but may still be
        /// served stale, before it gets the stale answer instead (RFC 8767 §5, "client response timer"; the
        /// RFC suggests 1.8 seconds). The resolution is not cut short: it goes on in the background, single-
        /// flight as ever, and its answer replaces the entry (an NXDOMAIN or NODATA removes it); if it
        /// fails, the name is served stale at once from then on. Measured on the real (continuous) clock,
        /// not the cache's ``MonotonicClock``. Default 1.8 seconds. Zero (or less) answers stale at once
        /// and refreshes in the background; a timeout at least as long as the upstream's time budget
        /// (``TrustedResolver/Configuration/budget``) never fires first: the caller waits for the
        /// upstreams, and gets the stale answer only once every upstream has failed.
        public var staleAnswerTimeout: Duration

        public init(maximumStale: UInt32 = 86_400, staleTTL: UInt32 = 30, refreshRetryInterval: UInt32 = 30,
                    refreshAhead: Double = 0.8, staleAnswerTimeout: Duration = .milliseconds(1800)) {
            self.maximumStale = maximumStale
            self.staleTTL = staleTTL
            self.refreshRetryInterval = refreshRetryInterval
            self.refreshAhead = refreshAhead
            self.staleAnswerTimeout = staleAnswerTimeout
        }
    }

    /// Counts since the cache was made (``removeAll()`` and ``remove(_:)`` keep them).
    public struct Statistics: Sendable, Hashable {
        /// Entries held now: positive and negative, fresh or kept to be served stale.
        public var entries: Int
        /// Lookups answered with fresh addresses.
        public var hits: Int
        /// Lookups answered with a fresh negative answer (NXDOMAIN, NODATA).
        public var negativeHits: Int
        /// Lookups that found no fresh entry (absent or expired).
        public var misses: Int
        /// Answers served stale (RFC 8767).
        public var staleServed: Int
        /// Background refreshes started: refresh-ahead of fresh entries and refreshes of names served stale.
        public var refreshes: Int

        public init(entries: Int = 0, hits: Int = 0, negativeHits: Int = 0, misses: Int = 0, staleServed: Int = 0,
                    refreshes: Int = 0) {
            self.entries = entries
            self.hits = hits
            self.negativeHits = negativeHits
            self.misses = misses
            self.staleServed = staleServed
            self.refreshes = refreshes
        }
    }

    struct Key: Hashable, Sendable {
        let name: HostName
        let family: AddressFamily
    }

    /// The TTL and entry limits in force (``update(limits:policy:)`` replaces them).
    public var limits: Limits { settings.withLock { $0.limits } }
    /// The serve-stale and refresh-ahead settings in force (``update(limits:policy:)`` replaces them).
    public var policy: Policy { settings.withLock { $0.policy } }
    /// The limits and policy, replaced together. Read once per store, never on a hit.
    private let settings: Mutex<Settings>
    /// The clock expiry is measured on; the DNS stub's forward cache measures on it too.
    package let clock: any MonotonicClock
    /// Whether ``clock`` is the ``SystemMonotonicClock``: a hit then reads it directly rather than
    /// through the existential (a call through the witness table and a projection of the box, 3% of a hot hit).
    private let systemClock: Bool
    /// The shards, inline in the cache object: a hit reaches its shard's lock without retaining or
    /// releasing anything (an array of shard objects cost a retain and a release of the shared shard on
    /// every lookup, a counter two threads hitting the same names fought over).
    private let shards = InlineArray<16, PaddedShard> { _ in PaddedShard() }
    /// Entries across every shard, counted beside the shards so that a store sees whether the cache is
    /// full without taking every lock. Changed only together with a shard's table, under its lock.
    private let total = Atomic<Int>(0)
    private let staleServed = Atomic<Int>(0)
    private let refreshes = Atomic<Int>(0)

    /// The limits and policy in force, with what is derived from them.
    private struct Settings: Sendable {
        let limits: Limits
        let policy: Policy
        /// ``Policy/refreshAhead`` when it is on, else `nil`.
        let refreshFraction: Double?

        init(limits: Limits, policy: Policy) {
            self.limits = limits
            self.policy = policy
            refreshFraction = policy.refreshAhead > 0 && policy.refreshAhead < 1 ? policy.refreshAhead : nil
        }
    }

    /// A shard's lock and table, followed by 88 bytes of padding: the gap between two shards' data then
    /// always holds a cache line boundary (64 bytes), so two threads hitting different shards never
    /// write the same line (the lock word and the counters are written by every hit).
    private struct PaddedShard: ~Copyable, Sendable {
        let table = Mutex(CacheShard())
        private let padding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    }

    /// The shard `name` belongs to.
    static func shardIndex(for name: HostName) -> Int {
        name.textHash & 15
    }

    /// Creates an empty cache.
    ///
    /// - Parameters:
    ///   - limits: TTL clamps (defaults 0 and 86 400 seconds), the negative TTL cap (900 seconds) and the
    ///     entry limit (default 100 000).
    ///   - policy: Serve-stale and refresh-ahead (defaults: one day of stale, 30-second stale TTL and
    ///     retry, a stale answer after 1.8 seconds without an upstream's, refresh after 0.8 of the TTL).
    ///   - clock: The clock expiry is measured on; `CLOCK_MONOTONIC_COARSE` by default.
    public init(limits: Limits = Limits(), policy: Policy = Policy(), clock: any MonotonicClock = SystemMonotonicClock()) {
        settings = Mutex(Settings(limits: limits, policy: policy))
        self.clock = clock
        systemClock = clock is SystemMonotonicClock
    }

    /// The cache's clock now, monotonic nanoseconds.
    func now() -> UInt64 {
        systemClock ? SystemMonotonicClock.nanoseconds() : clock.nanoseconds()
    }

    /// Replaces the limits and the policy at once (a reload). Answers stored from now on get the new
    /// TTL clamps, stale time and refresh-ahead point; entries already held keep the lifetimes they were
    /// given. A lower ``Limits/maximumEntries`` takes effect at once: expired entries go first, then the
    /// least recently used of each shard in turn.
    public func update(limits: Limits, policy: Policy) {
        settings.withLock { $0 = Settings(limits: limits, policy: policy) }
        let now = clock.nanoseconds()
        var shard = 0
        var idle = 0
        // Round the shards, one eviction each, until the count fits or no shard has anything left.
        while total.load(ordering: .relaxed) > max(0, limits.maximumEntries), idle < shards.count {
            let removed = shards[shard].table.withLock { table in
                let removed = table.evict(now: now, sparingNewest: false)
                total.subtract(removed, ordering: .relaxed)
                return removed
            }
            idle = removed > 0 ? 0 : idle + 1
            shard = (shard + 1) % shards.count
        }
    }

    // MARK: Lookups

    /// The fresh addresses for `name` and `family`, marked ``Resolution/Source/cache``, or `nil` (nothing
    /// cached, a negative answer, or an expired entry). A hit marks the entry used (eviction spares it once).
    public func lookup(_ name: HostName, family: AddressFamily) -> Resolution? {
        guard case .addresses(let addresses, _) = freshHit(name, family: family, now: now()) else { return nil }
        return addresses.resolution(name: name)
    }

    /// The fresh addresses for `name` and `family` read in place, or `nil` as for ``lookup(_:family:)``:
    /// the same lookup, counted the same, without building a ``Resolution`` (nothing is allocated).
    public func cachedAddresses(_ name: HostName, family: AddressFamily) -> CachedAddresses? {
        guard case .addresses(let addresses, _) = freshHit(name, family: family, now: now()) else { return nil }
        return addresses
    }

    /// The fresh entry for `name` and `family`, positive (source ``Resolution/Source/cache``) or negative
    /// (``Resolution/Source/negativeCache``), with the seconds it has left and its age on the cache's
    /// monotonic clock (rounded down), or `nil`. A DNS server gives out each record's TTL less `age`.
    public func lookupDetailed(_ name: HostName, family: AddressFamily) -> ResolutionOutcome? {
        let now = now()
        guard case .fresh(let found) = find(name, family: family, now: now) else { return nil }
        return outcome(of: found, now: now)
    }

    /// The fresh answer for `name` and `family` at `now`, counted
    /// (``CacheShard/freshHit(_:inline:family:now:claimingRefresh:)``); with `claimingRefresh`, a due
    /// refresh-ahead is claimed for this caller.
    @inline(__always)
    func freshHit(_ name: HostName, family: AddressFamily, now: UInt64, claimingRefresh: Bool = false,
                  positiveOnly: Bool = false) -> CacheShard.Hit {
        let inline = InlineName(name.text)
        return shards[Self.shardIndex(for: name)].table.withLock { table in
            let hit = table.freshHit(name, inline: inline, family: family, now: now, claimingRefresh: claimingRefresh,
                                     positiveOnly: positiveOnly)
            if case .miss(removed: true) = hit { total.subtract(1, ordering: .relaxed) }
            return hit
        }
    }

    /// Looks up `name` and `family` at `now`, counting the lookup unless `counting` is false; an entry
    /// past its keeping time is removed. With `claimingRefresh`, a due background refresh (refresh-ahead
    /// of a fresh entry, the retry of one served stale) is claimed for this caller
    /// (``CacheShard/Found/refreshClaimed``), for one caller at a time.
    func find(_ name: HostName, family: AddressFamily, now: UInt64, counting: Bool = true,
              claimingRefresh: Bool = false) -> CacheShard.Lookup {
        let key = CacheShard.Key(name, family)
        return shards[Self.shardIndex(for: name)].table.withLock { table in
            let found = table.lookup(key, name: name, now: now, counting: counting, claimingRefresh: claimingRefresh)
            if case .removed = found { total.subtract(1, ordering: .relaxed) }
            return found
        }
    }

    /// A fresh entry's answer at `now`.
    func outcome(of entry: CacheShard.Found, now: UInt64) -> ResolutionOutcome {
        let ttlLeft = UInt32(clamping: (entry.expiresAt &- now) / 1_000_000_000)
        let age = UInt32(clamping: (entry.lifetime - min(entry.lifetime, entry.expiresAt &- now)) / 1_000_000_000)
        return ResolutionOutcome(answer: entry.answer, ttlLeft: ttlLeft, age: age)
    }

    /// An expired positive entry served stale (RFC 8767 §4): source ``Resolution/Source/stale``, every
    /// record's TTL ``Policy/staleTTL``; `nil` for a negative entry.
    func staleOutcome(of entry: CacheShard.Found) -> ResolutionOutcome? {
        guard case .addresses(let resolution) = entry.answer else { return nil }
        return staleOutcome(of: resolution)
    }

    /// `resolution`, an expired positive entry's answer, served stale.
    func staleOutcome(of resolution: Resolution) -> ResolutionOutcome {
        let staleTTL = policy.staleTTL
        return ResolutionOutcome(answer: .addresses(resolution.stale(ttl: staleTTL)), ttlLeft: staleTTL, age: 0)
    }

    /// Sets when the next background refresh of `name` and `family` may start, after one failed at `now`,
    /// unless the entry of `generation` was replaced meanwhile.
    func refreshFailed(_ name: HostName, family: AddressFamily, generation: UInt32, now: UInt64) {
        shards[Self.shardIndex(for: name)].table.withLock { table in
            table.refreshFailed(CacheShard.Key(name, family), generation: generation, at: now &+ refreshRetryNanoseconds)
        }
    }

    /// The expired positive entry for `name` and `family` served stale, now that an upstream failed at
    /// `now`: from then on lookups see it marked ``CacheShard/Found/servingStale``, and its next refresh
    /// may start after the retry interval. `nil` without such an entry.
    func serveStale(_ name: HostName, family: AddressFamily, now: UInt64) -> ResolutionOutcome? {
        let found = shards[Self.shardIndex(for: name)].table.withLock { table in
            table.serveStale(CacheShard.Key(name, family), name: name, now: now, next: now &+ refreshRetryNanoseconds)
        }
        return found.flatMap(staleOutcome(of:))
    }

    /// Counts a stale answer given to a caller.
    func countStaleServed() {
        staleServed.add(1, ordering: .relaxed)
    }

    /// Counts a background refresh started.
    func countRefresh() {
        refreshes.add(1, ordering: .relaxed)
    }

    /// Nanoseconds after a failed refresh until the next may start.
    var refreshRetryNanoseconds: UInt64 { UInt64(policy.refreshRetryInterval) * 1_000_000_000 }

    // MARK: Stores

    /// Seconds the cache keeps `outcome`, an answer just received, fresh: what ``store(_:family:)`` or
    /// ``store(_:)`` would give it; 0 when it would not keep it.
    func lifetime(of outcome: ResolutionOutcome) -> UInt32 {
        let limits = limits
        return switch outcome.answer {
        case .addresses(let resolution):
            resolution.source.isTrustedAnswer ? limits.lifetime(for: resolution.ttl) : 0
        case .negative(let negative):
            negative.source.isTrustedAnswer ? min(negative.ttl, limits.maximumNegativeTTL) : 0
        }
    }

    /// Keeps `resolution` for its clamped TTL (and, expired, ``Policy/maximumStale`` more to be served
    /// stale); does nothing when that lifetime is 0 or the answer did not come from a trusted upstream
    /// (source ``Resolution/Source/upstream`` or ``Resolution/Source/cache``). Replaces the entry for the
    /// same name and family, negative ones included. When the cache then holds more than
    /// ``Limits/maximumEntries``, expired entries or the least recently used one go.
    public func store(_ resolution: Resolution, family: AddressFamily) {
        let settings = settings.withLock { $0 }
        let lifetime = settings.limits.lifetime(for: resolution.ttl)
        // Untrusted, literal, pinned and stale answers are never cached; a limit of 0 caches nothing.
        guard lifetime > 0, resolution.source.isTrustedAnswer || resolution.source == .cache, settings.limits.maximumEntries > 0
        else { return }
        let now = clock.nanoseconds()
        let expiresAt = now + UInt64(lifetime) * 1_000_000_000
        let refreshAt = settings.refreshFraction.map { now + UInt64(Double(lifetime) * $0 * 1e9) } ?? .max
        let entry = CacheShard.Entry(content: .positive(resolution.from(.cache)), family: family,
                                     lifetime: UInt64(lifetime) * 1_000_000_000,
                                     expiresAt: expiresAt,
                                     keepUntil: expiresAt + UInt64(settings.policy.maximumStale) * 1_000_000_000,
                                     refreshAt: refreshAt)
        place(entry, name: resolution.name, now: now, maximumEntries: settings.limits.maximumEntries)
    }

    /// Keeps `negative` for the smaller of its SOA record's TTL and MINIMUM (RFC 2308 §5), at most
    /// ``Limits/maximumNegativeTTL``, so that the name and family are not asked again meanwhile.
    ///
    /// The answer replaces whatever was cached for its name and family, so no older addresses, fresh or
    /// stale, outlive it; NXDOMAIN (the name has no records at all) also removes what is cached for the
    /// name's other families. An answer without an SOA record or with a lifetime of 0 is not kept, but
    /// still removes those entries. An answer that did not come from a trusted upstream (a source other
    /// than ``Resolution/Source/upstream``: the untrusted fallback, a literal) changes nothing.
    public func store(_ negative: NegativeAnswer) {
        guard negative.source.isTrustedAnswer else { return }
        let limits = limits
        let lifetime = min(negative.ttl, limits.maximumNegativeTTL)
        let key = CacheShard.Key(negative.name, negative.family)
        let now = clock.nanoseconds()
        let home = Self.shardIndex(for: negative.name)
        // The name's other families live in the same shard.
        let others = negative.kind == .nxdomain
            ? AddressFamily.allCases.filter { $0 != negative.family }.map { CacheShard.Key(negative.name, $0) } : []
        let keep = lifetime > 0 && limits.maximumEntries > 0
        shards[home].table.withLock { table in
            for other in others where table.remove(other) { total.subtract(1, ordering: .relaxed) }
            if !keep, table.remove(key) { total.subtract(1, ordering: .relaxed) }
        }
        guard keep else { return }
        let expiresAt = now + UInt64(lifetime) * 1_000_000_000
        let entry = CacheShard.Entry(content: .negative(negative.from(.negativeCache)), family: negative.family,
                                     lifetime: UInt64(lifetime) * 1_000_000_000, expiresAt: expiresAt, keepUntil: expiresAt,
                                     refreshAt: .max)
        place(entry, name: negative.name, now: now, maximumEntries: limits.maximumEntries)
    }

    /// Stores `entry`, the answer for `name`, in its shard, then makes room when the cache holds more
    /// than `maximumEntries`.
    private func place(_ entry: CacheShard.Entry, name: HostName, now: UInt64, maximumEntries: Int) {
        let home = Self.shardIndex(for: name)
        let roomMade = shards[home].table.withLock { table -> Bool in
            guard table.insert(entry, name: name) else { return true }  // replaced: the count is unchanged
            // Decided under the lock, so each store that takes the count past the limit removes one.
            guard total.add(1, ordering: .relaxed).newValue > maximumEntries else { return true }
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

    // MARK: Saving and restoring (the cache file)

    /// One entry as a cache file keeps it: the answer (its `receivedAt` is the wall-clock receive time)
    /// and the family it answers.
    struct SavedEntry: Sendable, Hashable {
        let answer: ResolutionOutcome.Answer
        let family: AddressFamily
    }

    /// Every entry held, fresh or kept to be served stale, least recently used first within each shard.
    func savedEntries() -> [SavedEntry] {
        var saved: [SavedEntry] = []
        for shard in shards.indices {
            for (answer, family) in shards[shard].table.withLock({ $0.answersOldestFirst }) {
                saved.append(SavedEntry(answer: answer, family: family))
            }
        }
        return saved
    }

    /// Stores `saved`, received `age` seconds ago (on the wall clock), for what is left of the lifetime
    /// this cache would give it: fresh while some is left; a positive answer past it comes back expired,
    /// to be served stale only under the serve-stale rules, while within ``Policy/maximumStale``; anything
    /// older, and an answer this cache would not keep, is dropped.
    ///
    /// - Returns: Whether the entry was stored.
    @discardableResult
    func restore(_ saved: SavedEntry, age: UInt64) -> Bool {
        let settings = settings.withLock { $0 }
        let limits = settings.limits
        guard limits.maximumEntries > 0 else { return false }
        let content: CacheShard.Entry.Content
        let lifetime: UInt64
        let stale: UInt64
        let name: HostName
        let positive: Bool
        switch saved.answer {
        case .addresses(let resolution):
            content = .positive(resolution.from(.cache))
            lifetime = UInt64(limits.lifetime(for: resolution.ttl))
            stale = UInt64(settings.policy.maximumStale)
            name = resolution.name
            positive = true
        case .negative(let negative):
            content = .negative(negative.from(.negativeCache))
            lifetime = UInt64(min(negative.ttl, limits.maximumNegativeTTL))
            stale = 0
            name = negative.name
            positive = false
        }
        guard lifetime > 0, age < lifetime + stale else { return false }
        let now = clock.nanoseconds()
        let second: UInt64 = 1_000_000_000
        let expiresAt = age < lifetime ? now + (lifetime - age) * second : now
        // The refresh-ahead point, counted back from the expiry; one already passed is due now.
        let refreshAt = !positive ? .max : settings.refreshFraction.map { fraction in
            let beforeExpiry = UInt64(Double(lifetime) * (1 - fraction) * 1e9)
            return expiresAt - min(expiresAt, beforeExpiry)
        } ?? .max
        let entry = CacheShard.Entry(content: content, family: saved.family, lifetime: lifetime * second, expiresAt: expiresAt,
                                     keepUntil: now + (lifetime + stale - age) * second, refreshAt: refreshAt)
        place(entry, name: name, now: now, maximumEntries: limits.maximumEntries)
        return true
    }

    // MARK: Flushing and counting

    /// Removes every entry for `name`, every family, positive and negative (a flush). A resolution of the
    /// name already running stores its answer when it ends.
    public func remove(_ name: HostName) {
        shards[Self.shardIndex(for: name)].table.withLock { table in
            for family in AddressFamily.allCases where table.remove(CacheShard.Key(name, family)) {
                total.subtract(1, ordering: .relaxed)
            }
        }
    }

    /// Removes every entry whose answer came from an upstream `isGone` picks (a reload that drops
    /// upstreams: their answers are no longer vouched for). `isGone` runs under a shard's lock, once per
    /// entry: keep it a comparison.
    ///
    /// - Returns: The number of entries removed.
    @discardableResult
    public func removeAll(answeredBy isGone: (Upstream) -> Bool) -> Int {
        removeFromEachShard { $0.removeAll(answeredBy: isGone) }
    }

    /// Removes every negative entry and every expired one (kept to be served stale or not): what a network
    /// change makes doubtful (issue 30). Fresh positive answers stay, so names in use keep answering while
    /// their refresh runs.
    ///
    /// - Returns: The number of entries removed.
    @discardableResult
    public func removeNegativeAndStale() -> Int {
        let now = clock.nanoseconds()
        return removeFromEachShard { $0.removeNegativeAndExpired(now: now) }
    }

    /// Runs `remove` on each shard under its lock; it returns how many entries it removed. Returns the sum.
    private func removeFromEachShard(_ remove: (inout CacheShard) -> Int) -> Int {
        var removed = 0
        for shard in shards.indices {
            shards[shard].table.withLock { table in
                let count = remove(&table)
                total.subtract(count, ordering: .relaxed)
                removed += count
            }
        }
        return removed
    }

    /// Removes every entry, addresses and negative answers (NXDOMAIN, NODATA) alike, for a name at or
    /// below one of `domains` by whole labels: what a route that a reload removes or changes answered, and
    /// what the default upstreams answered for names a new route takes (split DNS, ``RouteTable``).
    /// ``removeAll(answeredBy:)`` drops by upstream only, which misses both when the same server answers
    /// on either side.
    ///
    /// - Returns: The number of entries removed.
    @discardableResult
    public func removeAll(underAnyOf domains: [HostName]) -> Int {
        guard !domains.isEmpty else { return 0 }
        let suffixes = domains.map { "." + $0.text }
        let exact = Set(domains.map(\.text))
        return removeFromEachShard { table in
            table.removeAll(named: { name in exact.contains(name) || suffixes.contains { name.hasSuffix($0) } })
        }
    }

    /// The names and families of the `limit` most recently used entries at most (recency as eviction
    /// keeps it, by second chance): each shard's most recent in turn, so no shard's names crowd out the
    /// others'.
    public func recentKeys(limit: Int) -> [(name: HostName, family: AddressFamily)] {
        guard limit > 0 else { return [] }
        var perShard: [[(name: HostName, family: AddressFamily)]] = []
        for shard in shards.indices { perShard.append(shards[shard].table.withLock { $0.recentKeys(limit: limit) }) }
        var keys: [(name: HostName, family: AddressFamily)] = []
        var depth = 0
        while keys.count < limit, perShard.contains(where: { $0.count > depth }) {
            for list in perShard where list.count > depth && keys.count < limit { keys.append(list[depth]) }
            depth += 1
        }
        return keys
    }

    /// The number of entries held, fresh or not yet removed.
    public var count: Int {
        var count = 0
        for shard in shards.indices { count += shards[shard].table.withLock { $0.count } }
        return count
    }

    /// Drops every entry (a flush of everything).
    public func removeAll() {
        for shard in shards.indices {
            shards[shard].table.withLock { table in
                total.subtract(table.count, ordering: .relaxed)
                table.removeAll()
            }
        }
    }

    /// The entry count and the counters since the cache was made.
    public var statistics: Statistics {
        var statistics = Statistics(staleServed: staleServed.load(ordering: .relaxed),
                                    refreshes: refreshes.load(ordering: .relaxed))
        for shard in shards.indices {
            shards[shard].table.withLock { table in
                statistics.entries += table.count
                statistics.hits += table.hits
                statistics.negativeHits += table.negativeHits
                statistics.misses += table.misses
            }
        }
        return statistics
    }
}
