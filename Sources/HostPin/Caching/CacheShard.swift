import Foundation

/// One shard of a ``ResolutionCache``: its entries, a hash index over them, and the order they were last
/// used in, for eviction. A plain value with no lock of its own: the cache keeps each shard behind a
/// `Mutex`.
///
/// Laid out for memory and for hits that share nothing (docs/ARCHITECTURE.md, "Cache"):
/// - An entry is a ``Node`` value inside ``chunks`` (arrays of at most ``chunkSize`` nodes, so growth
///   never copies or doubles the whole table): the name's text inline (``InlineName``, up to 32 bytes),
///   the times, the first address inline, the upstream as an index into ``upstreams``; only the rare
///   parts (more addresses, a CNAME chain, a negative answer, a name longer than 32 bytes) live in a
///   ``Rare`` object. No object or heap block per entry for the common one-address answer.
/// - The index is open addressing with linear probing over node positions, each beside a 32-bit tag of
///   the key's hash (``Slot``, 8 bytes): a probe reads a node only where the tag matches, then compares
///   the name's precomputed hash and its inline text, both in that node.
/// - The recency order is a doubly linked list threaded through the nodes by position, kept by "second
///   chance" (the CLOCK approximation of least recently used): a hit only sets the node's `referenced`
///   bit, when it is not yet set, and eviction moves a referenced node from the old end to the new end,
///   clearing its bit, instead of removing it. A hit thus writes nothing once its node is marked, and
///   touches no neighbouring node (relinking on every hit cost three more cache misses for a random key
///   and a write for every hot one). A removed node goes on a free list and is reused by the next insert.
/// - A hit copies the answer's parts out (``CachedAddresses``): no reference count of the shard's storage
///   is touched for a one-address answer, so two threads hitting the same names share no counter but the
///   shard's lock. `resolve` builds a new `Resolution` from them after the lock, carrying the caller's own
///   `HostName`; the proxy, the interceptor and the stub read the parts as they are and allocate nothing.
struct CacheShard {
    /// What identifies an entry.
    struct Key: Hashable {
        let text: String
        let textHash: Int
        let family: AddressFamily
        /// `text` inline; `nil` when it is too long to be.
        let inline: InlineName?

        init(_ name: HostName, _ family: AddressFamily) {
            text = name.text
            textHash = name.textHash
            self.family = family
            inline = InlineName(name.text)
        }

        static func == (lhs: Key, rhs: Key) -> Bool {
            lhs.textHash == rhs.textHash && lhs.family == rhs.family && lhs.text == rhs.text
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(textHash)
            hasher.combine(family)
        }
    }

    /// An answer to keep, as ``ResolutionCache`` hands it to ``insert(_:)``.
    struct Entry {
        /// What a hit returns.
        enum Content {
            /// Addresses, already marked ``Resolution/Source/cache``.
            case positive(Resolution)
            /// NXDOMAIN or NODATA, already marked ``Resolution/Source/negativeCache``.
            case negative(NegativeAnswer)
        }

        let content: Content
        /// The family it answers.
        let family: AddressFamily
        /// The entry's whole fresh lifetime in nanoseconds, whole seconds: with ``expiresAt`` it gives the
        /// entry's age (an entry restored from a cache file was received before the clock's start, so a
        /// stored-at time could be negative).
        let lifetime: UInt64
        /// Monotonic nanoseconds from which the entry is expired: no longer fresh.
        let expiresAt: UInt64
        /// Monotonic nanoseconds from which a lookup removes the entry: ``expiresAt`` plus the longest
        /// time an expired positive entry may be served stale (RFC 8767 §4); ``expiresAt`` for a negative
        /// entry, which is never served stale.
        let keepUntil: UInt64
        /// Monotonic nanoseconds from which a use of the entry starts a background refresh (refresh-ahead);
        /// `UInt64.max` for entries never refreshed (negative ones, and every entry when refresh-ahead is
        /// off).
        let refreshAt: UInt64
    }

    /// An entry's answer as a lookup copied it out under the shard's lock.
    struct Found: Sendable {
        /// The answer: a positive one carries the name the lookup asked with and source
        /// ``Resolution/Source/cache``; a negative one source ``Resolution/Source/negativeCache``.
        let answer: ResolutionOutcome.Answer
        /// The entry's whole fresh lifetime, nanoseconds.
        let lifetime: UInt64
        /// Monotonic nanoseconds from which the entry is expired.
        let expiresAt: UInt64
        /// Tells this entry from one stored later under the same key (``refreshFailed(_:generation:at:)``).
        let generation: UInt32
        /// Whether an upstream failure was answered with this entry served stale: later uses get the stale
        /// answer at once (RFC 8767 §5, the failure recheck).
        let servingStale: Bool
        /// Whether this lookup claimed the entry's background refresh: true for exactly one lookup once the
        /// refresh point has passed, until ``refreshFailed(_:generation:at:)`` sets the next.
        let refreshClaimed: Bool
    }

    /// The parts of an answer most answers lack, kept out of line so that a one-address answer needs no
    /// object of its own.
    final class Rare: Sendable {
        /// The addresses after the first.
        let more: [ResolvedAddress]
        let cnames: [CNAMERecord]
        /// The whole answer, for a negative entry.
        let negative: NegativeAnswer?
        /// The upstream, when ``CacheShard/upstreams`` is full.
        let upstream: Upstream?
        /// The name's text, when it is too long for ``Node/name``.
        let longName: String?
        /// A positive answer's DNSSEC status when it is bogus (kept in report mode), with its reason; the
        /// other statuses are flag bits of the node (``Node/dnssecMask``), and a negative answer keeps its
        /// own in ``negative``.
        let dnssec: DNSSECStatus?
        /// A positive answer's reason for being insecure, when it has one (``Resolution/insecurity``).
        let insecurity: InsecureReason?

        init(more: [ResolvedAddress], cnames: [CNAMERecord], negative: NegativeAnswer?, upstream: Upstream?,
             longName: String?, dnssec: DNSSECStatus? = nil, insecurity: InsecureReason? = nil) {
            self.more = more
            self.cnames = cnames
            self.negative = negative
            self.upstream = upstream
            self.longName = longName
            self.dnssec = dnssec
            self.insecurity = insecurity
        }
    }

    /// One entry and its place in the recency list (128 bytes). What a probe reads comes first: the name,
    /// its hash, the family and the expiry, in the node's first 56 bytes.
    private struct Node {
        /// The name's normalised text; ``InlineName/none`` while the node is free, and for a name too
        /// long to be inline (then in ``Rare/longName``).
        var name: InlineName
        var textHash: Int
        var expiresAt: UInt64
        var family: AddressFamily
        /// ``negative``, ``servingStale`` and ``referenced``, bits of one byte.
        var flags: UInt8
        /// 1 + the upstream's index in ``CacheShard/upstreams``; 0 for none (or in ``Rare/upstream``).
        var upstream: UInt16
        /// ``first``'s own TTL, seconds.
        var firstTTL: UInt32
        var generation: UInt32
        /// Whole fresh lifetime, seconds.
        var lifetime: UInt32
        /// A positive answer's first address.
        var first: IPAddress
        /// Wall-clock receive time, seconds since 2001 (`Date`'s reference).
        var receivedAt: Double
        var keepUntil: UInt64
        /// The refresh-ahead point while the entry is fresh; after a failed refresh, when the next may
        /// start; `UInt64.max` while one runs and for entries never refreshed.
        var refreshAt: UInt64
        var rare: Rare?
        /// Towards the least recently used end; on the free list, the next free node.
        var older: Int32
        /// Towards the most recently used end.
        var newer: Int32

        /// The name's text.
        var text: String { name.isNone ? rare?.longName ?? "" : name.text }

        static let negative: UInt8 = 1
        static let servingStale: UInt8 = 2
        /// Used since eviction last looked at the node (or since it was stored): eviction gives it a second
        /// chance.
        static let referenced: UInt8 = 4
        /// Two bits for a positive answer's DNSSEC status other than bogus (``dnssecCode(_:)``), so a
        /// validated one-address answer needs no ``Rare`` and its hit costs what an unvalidated one does;
        /// a bogus status (report mode) carries its reason in ``Rare/dnssec``.
        static let dnssecShift: UInt8 = 3
        static let dnssecMask: UInt8 = 3 << dnssecShift
    }

    /// The flag bits of `status` at ``Node/dnssecShift``: 0 not validated (or bogus, kept in ``Rare``),
    /// 1 secure, 2 insecure, 3 indeterminate.
    private static func dnssecCode(_ status: DNSSECStatus?) -> UInt8 {
        let code: UInt8 = switch status {
        case nil, .bogus: 0
        case .secure: 1
        case .insecure: 2
        case .indeterminate: 3
        }
        return code << Node.dnssecShift
    }

    /// The status ``dnssecCode(_:)`` wrote into `flags`.
    static func dnssecStatus(_ flags: UInt8) -> DNSSECStatus? {
        switch (flags & Node.dnssecMask) >> Node.dnssecShift {
        case 1: .secure
        case 2: .insecure
        case 3: .indeterminate
        default: nil
        }
    }

    /// How long after a sweep for expired entries the next may start: a shard full of entries expiring
    /// one after another would otherwise be walked whole on every insert.
    static let sweepInterval: UInt64 = 1_000_000_000
    /// Nodes per chunk of ``chunks``.
    private static let chunkShift = 9
    private static let chunkSize = 1 << chunkShift
    /// Distinct upstreams a shard numbers; more go in ``Rare/upstream`` (an answer names the upstream
    /// that gave it: a handful per configuration).
    private static let maximumUpstreams = 1024

    /// One place of the index: a node's position and its key's tag (``tag(_:_:)``), 8 bytes.
    ///
    /// The tag is what lets a probe pass a slot of another key without reading that key's node: a random
    /// key's node is a cache miss of its own (some 100 ns), and at three quarters full a probe passes one
    /// or two others on average. It also gives the slot's home, so that growing the index and removing
    /// from it (the backward shift) read no node either.
    private struct Slot {
        /// ``CacheShard/tag(_:_:)`` of the node's key.
        let tag: UInt32
        /// The node's position; -1 for an empty slot.
        let position: Int32

        static let empty = Slot(tag: 0, position: -1)
        var isEmpty: Bool { position < 0 }
    }

    /// Nodes by key, with their tags: a power of two in size, at most three quarters full.
    private var slots: [Slot] = []
    private var chunks: [[Node]] = []
    private var nodeCount = 0
    private var upstreams: [Upstream] = []
    private var newest: Int32 = -1
    private var oldest: Int32 = -1
    private var firstFree: Int32 = -1
    private var nextGeneration: UInt32 = 0
    /// No entry expires before this (monotonic nanoseconds): until then a sweep would find nothing.
    private var earliestExpiry = UInt64.max
    /// The earliest time the next sweep may start.
    private var nextSweep: UInt64 = 0

    /// The number of entries held, fresh or not yet removed.
    private(set) var count = 0

    /// Lookups that found a fresh positive entry.
    var hits = 0
    /// Lookups that found a fresh negative entry.
    var negativeHits = 0
    /// Lookups that found no fresh entry.
    var misses = 0

    /// What ``lookup(_:name:now:counting:claimingRefresh:)`` found.
    enum Lookup {
        /// A fresh entry, now marked used.
        case fresh(Found)
        /// An expired entry kept to be served stale, left where it is in the recency order.
        case expired(Found)
        /// An entry past its keeping time, now removed.
        case removed
        /// Nothing.
        case absent
    }

    // MARK: Lookups

    /// Looks `key` up at monotonic time `now`: a fresh entry is marked used (see ``evict(now:sparingNewest:)``),
    /// one past its keeping time is removed.
    ///
    /// - Parameters:
    ///   - name: The name asked, `key`'s: a positive answer carries it.
    ///   - counting: Count the lookup as a hit, a negative hit or a miss (a caller's lookup, not the
    ///     resolver's second look).
    ///   - claimingRefresh: Claim the entry's background refresh when it is due: a fresh entry past its
    ///     refresh-ahead point, or an expired one being served stale past its retry time.
    mutating func lookup(_ key: Key, name: HostName, now: UInt64, counting: Bool = true, claimingRefresh: Bool = false)
        -> Lookup
    {
        guard let slot = slot(of: key) else {
            if counting { misses += 1 }
            return .absent
        }
        let (chunk, offset) = Self.place(slots[slot].position)
        let expiresAt = chunks[chunk][offset].expiresAt
        if expiresAt <= now {
            if counting { misses += 1 }
            guard chunks[chunk][offset].keepUntil > now else {
                remove(slot: slot)
                return .removed
            }
            let claimed = claimingRefresh && chunks[chunk][offset].flags & Node.servingStale != 0
                && claimRefresh(chunk, offset, now)
            return .expired(found(chunk, offset, name: name, claimed: claimed))
        }
        if counting {
            if chunks[chunk][offset].flags & Node.negative != 0 { negativeHits += 1 } else { hits += 1 }
        }
        markReferenced(chunk, offset)
        let claimed = claimingRefresh && claimRefresh(chunk, offset, now)
        return .fresh(found(chunk, offset, name: name, claimed: claimed))
    }

    /// Sets when the next refresh of the entry under `key` may start, if it is still the one of
    /// `generation` (an entry stored since is left alone).
    mutating func refreshFailed(_ key: Key, generation: UInt32, at next: UInt64) {
        guard let slot = slot(of: key) else { return }
        let (chunk, offset) = Self.place(slots[slot].position)
        guard chunks[chunk][offset].generation == generation else { return }
        chunks[chunk][offset].refreshAt = next
    }

    /// Marks the expired entry under `key` as served stale, its next refresh at `next`, and returns it;
    /// `nil` without an expired positive entry kept to be served stale.
    mutating func serveStale(_ key: Key, name: HostName, now: UInt64, next: UInt64) -> Found? {
        guard case .expired(let found) = lookup(key, name: name, now: now, counting: false),
              case .addresses = found.answer, let slot = slot(of: key)
        else { return nil }
        let (chunk, offset) = Self.place(slots[slot].position)
        chunks[chunk][offset].flags |= Node.servingStale
        chunks[chunk][offset].refreshAt = next
        return found
    }

    /// Every entry's answer and family, least recently used first (the order that, stored again one by
    /// one, rebuilds the recency order).
    var answersOldestFirst: [(ResolutionOutcome.Answer, AddressFamily)] {
        var answers: [(ResolutionOutcome.Answer, AddressFamily)] = []
        answers.reserveCapacity(count)
        var position = oldest
        while position >= 0 {
            let (chunk, offset) = Self.place(position)
            let name = HostName(normalized: chunks[chunk][offset].text)
            answers.append((found(chunk, offset, name: name, claimed: false).answer, chunks[chunk][offset].family))
            position = chunks[chunk][offset].newer
        }
        return answers
    }

    // MARK: Changes

    /// Removes the entry under `key`, if any.
    ///
    /// - Returns: Whether there was one.
    mutating func remove(_ key: Key) -> Bool {
        guard let slot = slot(of: key) else { return false }
        remove(slot: slot)
        return true
    }

    /// Stores `entry` under its key as the most recently used, replacing an entry already there.
    ///
    /// - Returns: Whether the key is new (the shard holds one entry more).
    @discardableResult
    mutating func insert(_ entry: Entry, name: HostName) -> Bool {
        earliestExpiry = min(earliestExpiry, entry.expiresAt)
        let key = Key(name, entry.family)
        let node = makeNode(entry, key: key)
        if let slot = slot(of: key) {
            let position = slots[slot].position
            let (chunk, offset) = Self.place(position)
            let (older, newer) = (chunks[chunk][offset].older, chunks[chunk][offset].newer)
            chunks[chunk][offset] = node
            (chunks[chunk][offset].older, chunks[chunk][offset].newer) = (older, newer)
            if position != newest {
                unlink(position)
                linkAsNewest(position)
            }
            return false
        }
        let position: Int32
        if firstFree >= 0 {
            position = firstFree
            let (chunk, offset) = Self.place(position)
            firstFree = chunks[chunk][offset].older
            chunks[chunk][offset] = node
        } else {
            position = Int32(nodeCount)
            if nodeCount & (Self.chunkSize - 1) == 0 { chunks.append([]) }
            chunks[chunks.count - 1].append(node)
            nodeCount += 1
        }
        if (count + 1) * 4 > slots.count * 3 { grow() }
        let tag = Self.tag(key.textHash, key.family)
        var slot = home(tag)
        while !slots[slot].isEmpty { slot = (slot + 1) & (slots.count - 1) }
        slots[slot] = Slot(tag: tag, position: position)
        count += 1
        linkAsNewest(position)
        return true
    }

    /// Makes room for one entry: removes every expired entry when some may have expired (a sweep, at
    /// most once per ``sweepInterval``), those still kept to be served stale included, else the least
    /// recently used entry by second chance: from the old end of the recency list, a node used since it
    /// was last looked at loses its mark and moves to the new end; the first one unused goes.
    ///
    /// - Parameter sparingNewest: Never remove the most recently stored entry (the one just inserted).
    /// - Returns: The number of entries removed; 0 when there was nothing to remove.
    mutating func evict(now: UInt64, sparingNewest: Bool) -> Int {
        if now >= earliestExpiry, now >= nextSweep {
            let removed = removeExpired(now: now)
            if removed > 0 { return removed }
        }
        let spared = sparingNewest ? newest : -1
        // One round clears every mark; the second finds an unmarked node unless only the spared one is left.
        for _ in 0..<(2 * count + 1) {
            let position = oldest
            guard position >= 0 else { return 0 }
            let (chunk, offset) = Self.place(position)
            if position != spared, chunks[chunk][offset].flags & Node.referenced == 0 {
                guard let slot = slot(ofPosition: position) else { return 0 }
                remove(slot: slot)
                return 1
            }
            chunks[chunk][offset].flags &= ~Node.referenced
            if position != newest {
                unlink(position)
                linkAsNewest(position)
            }
        }
        return 0
    }

    /// Removes every entry whose answer came from an upstream `isGone` picks (see
    /// ``ResolutionCache/removeAll(answeredBy:)``).
    ///
    /// - Returns: The number of entries removed.
    mutating func removeAll(answeredBy isGone: (Upstream) -> Bool) -> Int {
        let upstreams = upstreams
        return removeNodes { node in
            let number = Int(node.upstream)
            let upstream = number > 0 ? upstreams[number - 1] : (node.rare?.negative?.upstream ?? node.rare?.upstream)
            return upstream.map(isGone) ?? false
        }
    }

    /// Removes every entry, positive or negative, whose name `isGone` picks (see
    /// ``ResolutionCache/removeAll(underAnyOf:)``).
    ///
    /// - Returns: The number of entries removed.
    mutating func removeAll(named isGone: (String) -> Bool) -> Int {
        removeNodes { isGone($0.text) }
    }

    /// Removes every entry whose node `isGone` picks, oldest first.
    private mutating func removeNodes(_ isGone: (Node) -> Bool) -> Int {
        var removed = 0
        var position = oldest
        while position >= 0 {
            let (chunk, offset) = Self.place(position)
            let newer = chunks[chunk][offset].newer
            if isGone(chunks[chunk][offset]), let slot = slot(ofPosition: position) {
                remove(slot: slot)
                removed += 1
            }
            position = newer
        }
        return removed
    }

    /// Removes every negative entry (NXDOMAIN, NODATA) and every expired one, those kept to be served
    /// stale included: after a network change they were learnt on the old path (issue 30).
    ///
    /// - Returns: The number of entries removed.
    mutating func removeNegativeAndExpired(now: UInt64) -> Int {
        var removed = 0
        var position = oldest
        while position >= 0 {
            let (chunk, offset) = Self.place(position)
            let newer = chunks[chunk][offset].newer
            let node = chunks[chunk][offset]
            if node.flags & Node.negative != 0 || node.expiresAt <= now, let slot = slot(ofPosition: position) {
                remove(slot: slot)
                removed += 1
            }
            position = newer
        }
        return removed
    }

    /// The names and families of the `limit` most recently used entries at most, most recent first.
    func recentKeys(limit: Int) -> [(name: HostName, family: AddressFamily)] {
        var keys: [(name: HostName, family: AddressFamily)] = []
        var position = newest
        while position >= 0, keys.count < limit {
            let (chunk, offset) = Self.place(position)
            keys.append((HostName(normalized: chunks[chunk][offset].text), chunks[chunk][offset].family))
            position = chunks[chunk][offset].older
        }
        return keys
    }

    /// Drops every entry and the memory that held them; the counters stay.
    mutating func removeAll() {
        let (hits, negativeHits, misses, generation) = (self.hits, self.negativeHits, self.misses, nextGeneration)
        self = CacheShard()
        // Generations go on from where they were: a reader that kept one (the stub's encoded replies,
        // ``CachedAddresses/generation``) must never see it again on a later entry of the same name.
        (self.hits, self.negativeHits, self.misses, nextGeneration) = (hits, negativeHits, misses, generation)
    }

    // MARK: Nodes

    private static func place(_ position: Int32) -> (chunk: Int, offset: Int) {
        (Int(position) >> chunkShift, Int(position) & (chunkSize - 1))
    }

    private mutating func makeNode(_ entry: Entry, key: Key) -> Node {
        nextGeneration &+= 1
        var node = Node(name: key.inline ?? .none, textHash: key.textHash, expiresAt: entry.expiresAt, family: entry.family,
                        flags: 0, upstream: 0, firstTTL: 0, generation: nextGeneration,
                        lifetime: UInt32(clamping: entry.lifetime / 1_000_000_000), first: .loopbackV4, receivedAt: 0,
                        keepUntil: entry.keepUntil, refreshAt: entry.refreshAt, rare: nil, older: -1, newer: -1)
        let longName = key.inline == nil ? key.text : nil
        switch entry.content {
        case .positive(let resolution):
            node.receivedAt = resolution.receivedAt.timeIntervalSinceReferenceDate
            if let first = resolution.addresses.first {
                node.first = first.address
                node.firstTTL = first.ttl
            }
            let index = resolution.upstream.flatMap { number($0) }
            if let index { node.upstream = index }
            let more = Array(resolution.addresses.dropFirst())
            node.flags = Self.dnssecCode(resolution.dnssec)
            var bogus: DNSSECStatus?
            if case .bogus = resolution.dnssec { bogus = resolution.dnssec }
            if !more.isEmpty || !resolution.cnames.isEmpty || (index == nil && resolution.upstream != nil) || longName != nil
                || bogus != nil || resolution.insecurity != nil {
                node.rare = Rare(more: more, cnames: resolution.cnames, negative: nil,
                                 upstream: index == nil ? resolution.upstream : nil, longName: longName, dnssec: bogus,
                                 insecurity: resolution.insecurity)
            }
        case .negative(let negative):
            node.receivedAt = negative.receivedAt.timeIntervalSinceReferenceDate
            node.rare = Rare(more: [], cnames: [], negative: negative, upstream: nil, longName: longName)
            node.flags = Node.negative
        }
        return node
    }

    /// 1 + `upstream`'s index in ``upstreams``, adding it; `nil` when the table is full.
    private mutating func number(_ upstream: Upstream) -> UInt16? {
        if let index = upstreams.firstIndex(of: upstream) { return UInt16(index + 1) }
        guard upstreams.count < Self.maximumUpstreams else { return nil }
        upstreams.append(upstream)
        return UInt16(upstreams.count)
    }

    /// The node's answer, a positive one carrying `name`. Reads the node field by field through a
    /// pointer: a copy of the whole node would retain its text, shared by every thread that hits it.
    private func found(_ chunk: Int, _ offset: Int, name: HostName, claimed: Bool) -> Found {
        chunks[chunk].withUnsafeBufferPointer { nodes in
            let node = nodes.baseAddress! + offset
            let answer: ResolutionOutcome.Answer
            if node.pointee.flags & Node.negative != 0, let negative = node.pointee.rare?.negative {
                answer = .negative(negative)
            } else {
                answer = .addresses(addresses(node, now: 0).resolution(name: name))
            }
            return Found(answer: answer, lifetime: UInt64(node.pointee.lifetime) * 1_000_000_000,
                         expiresAt: node.pointee.expiresAt, generation: node.pointee.generation,
                         servingStale: node.pointee.flags & Node.servingStale != 0, refreshClaimed: claimed)
        }
    }

    /// A positive node's answer as a hit copies it out under the shard's lock: a few words that share no
    /// reference count with other threads in the common case (one address, no CNAME, `rare` is `nil`).
    /// A caller that needs a `Resolution` builds it after the lock (``CachedAddresses/resolution(name:)``),
    /// so the lock is held for loads only.
    @inline(__always)
    private func addresses(_ node: UnsafePointer<Node>, now: UInt64) -> CachedAddresses {
        let number = Int(node.pointee.upstream)
        let lifetime = UInt64(node.pointee.lifetime) * 1_000_000_000
        let left = node.pointee.expiresAt &- now
        return CachedAddresses(first: ResolvedAddress(address: node.pointee.first, ttl: node.pointee.firstTTL),
                               rare: node.pointee.rare,
                               upstream: number > 0 ? upstreams[number - 1] : node.pointee.rare?.upstream,
                               receivedAt: node.pointee.receivedAt, dnssecFlags: node.pointee.flags & Node.dnssecMask,
                               generation: node.pointee.generation,
                               age: UInt32(clamping: (lifetime - min(lifetime, left)) / 1_000_000_000),
                               ttlLeft: UInt32(clamping: left / 1_000_000_000))
    }

    /// What ``freshHit(_:inline:family:now:claimingRefresh:)`` found.
    /// Small (a few words): it is returned through the lock's closure and the caller's switch, and an
    /// answer inside it would be moved at each step.
    enum Hit {
        /// A fresh positive entry's answer; `refresh` is the entry's generation when this lookup claimed
        /// its refresh-ahead.
        case addresses(CachedAddresses, refresh: UInt32?)
        /// A fresh negative entry's answer, in its ``Rare/negative``.
        case negative(Rare)
        /// No fresh entry; `removed` when one past its keeping time was removed.
        case miss(removed: Bool)
    }

    /// The fresh answer for `name` and `family` at `now`, counted as a hit, a negative hit or a miss; a
    /// fresh entry is marked used. The hit path of ``ResolutionCache/lookup(_:family:)``
    /// and ``CachingResolver/resolve(_:family:)``: the caller builds the answer once, after the lock, with
    /// no ``Found`` around it (a few hundred bytes moved at each step showed in the profile). A caller that misses looks again
    /// with ``lookup(_:name:now:counting:claimingRefresh:)``, not counting.
    ///
    /// - Parameter inline: `name`'s text inline (made before the lock is taken), `nil` when too long.
    /// - Parameter positiveOnly: For a caller that uses only a positive answer and resolves the name
    ///   otherwise (which counts the lookup then): a miss and a negative entry are not counted, and a
    ///   negative entry is reported as a miss.
    @inline(__always)
    mutating func freshHit(_ name: HostName, inline: InlineName?, family: AddressFamily, now: UInt64, claimingRefresh: Bool,
                           positiveOnly: Bool = false) -> Hit
    {
        guard let slot = slot(of: name.text, inline: inline, hash: name.textHash, family: family) else {
            if !positiveOnly { misses += 1 }
            return .miss(removed: false)
        }
        let (chunk, offset) = Self.place(slots[slot].position)
        guard chunks[chunk][offset].expiresAt > now else {
            if !positiveOnly { misses += 1 }
            guard chunks[chunk][offset].keepUntil <= now else { return .miss(removed: false) }
            remove(slot: slot)
            return .miss(removed: true)
        }
        markReferenced(chunk, offset)
        if chunks[chunk][offset].flags & Node.negative != 0, let rare = chunks[chunk][offset].rare, rare.negative != nil {
            if positiveOnly { return .miss(removed: false) }
            negativeHits += 1
            return .negative(rare)
        }
        hits += 1
        let refresh = claimingRefresh && claimRefresh(chunk, offset, now) ? chunks[chunk][offset].generation : nil
        return .addresses(chunks[chunk].withUnsafeBufferPointer { addresses($0.baseAddress! + offset, now: now) }, refresh: refresh)
    }

    /// Marks the node used, writing only when it is not marked yet: hits on a hot entry write nothing.
    @inline(__always)
    private mutating func markReferenced(_ chunk: Int, _ offset: Int) {
        if chunks[chunk][offset].flags & Node.referenced == 0 { chunks[chunk][offset].flags |= Node.referenced }
    }

    @inline(__always)
    private mutating func claimRefresh(_ chunk: Int, _ offset: Int, _ now: UInt64) -> Bool {
        guard now >= chunks[chunk][offset].refreshAt else { return false }
        chunks[chunk][offset].refreshAt = .max
        return true
    }

    /// Removes every entry expired at `now`; records when the next sweep may find something.
    private mutating func removeExpired(now: UInt64) -> Int {
        var removed = 0
        var earliest = UInt64.max
        var position = oldest
        while position >= 0 {
            let (chunk, offset) = Self.place(position)
            let newer = chunks[chunk][offset].newer
            let expiresAt = chunks[chunk][offset].expiresAt
            if expiresAt <= now, let slot = slot(ofPosition: position) {
                remove(slot: slot)
                removed += 1
            } else {
                earliest = min(earliest, expiresAt)
            }
            position = newer
        }
        earliestExpiry = earliest
        nextSweep = now + Self.sweepInterval
        return removed
    }

    // MARK: The index

    /// A key's tag: its hash mixed with its family, 32 bits. The low bits are the key's home slot (where
    /// its probe starts), the whole a filter a probe tests before reading the node. The shard index took
    /// the hash's low bits: the multiplication mixes them all in.
    @inline(__always)
    private static func tag(_ textHash: Int, _ family: AddressFamily) -> UInt32 {
        let familyBits: UInt64 = switch family {
        case .v4: 0x5555
        case .v6: 0xAAAA
        case .any: 0xFFFF
        }
        let mixed = (UInt64(bitPattern: Int64(textHash)) ^ familyBits << 48) &* 0x9E37_79B9_7F4A_7C15
        return UInt32(truncatingIfNeeded: mixed >> 32)
    }

    /// The slot a probe for a key of `tag` starts at.
    @inline(__always)
    private func home(_ tag: UInt32) -> Int {
        Int(tag) & (slots.count - 1)
    }

    /// The slot holding `key`'s node.
    private func slot(of key: Key) -> Int? {
        slot(of: key.text, inline: key.inline, hash: key.textHash, family: key.family)
    }

    /// The slot holding the node of `text` (whose hash is `hash`, and `inline` its ``InlineName``) and
    /// `family`. Takes the name's parts, borrowed, rather than a ``Key``: making one would retain the
    /// caller's text on every lookup. Reads a node only where the tag matches: on the probe's last slot
    /// but once in four billion.
    @inline(__always)
    private func slot(of text: String, inline: InlineName?, hash: Int, family: AddressFamily) -> Int? {
        guard !slots.isEmpty else { return nil }
        let tag = Self.tag(hash, family)
        var slot = home(tag)
        while true {
            let probed = slots[slot]
            if probed.isEmpty { return nil }
            if probed.tag == tag {
                let (chunk, offset) = Self.place(probed.position)
                if chunks[chunk][offset].textHash == hash, chunks[chunk][offset].family == family,
                   inline.map({ chunks[chunk][offset].name == $0 }) ?? (chunks[chunk][offset].rare?.longName == text)
                {
                    return slot
                }
            }
            slot = (slot + 1) & (slots.count - 1)
        }
    }

    /// The slot holding the node at `position`.
    private func slot(ofPosition position: Int32) -> Int? {
        guard !slots.isEmpty else { return nil }
        let (chunk, offset) = Self.place(position)
        var slot = home(Self.tag(chunks[chunk][offset].textHash, chunks[chunk][offset].family))
        while !slots[slot].isEmpty {
            if slots[slot].position == position { return slot }
            slot = (slot + 1) & (slots.count - 1)
        }
        return nil
    }

    /// Doubles the index (16 slots at first) and places every node again, by the tags alone.
    private mutating func grow() {
        let capacity = max(16, slots.count * 2)
        let old = slots
        slots = [Slot](repeating: .empty, count: capacity)
        for moved in old where !moved.isEmpty {
            var slot = home(moved.tag)
            while !slots[slot].isEmpty { slot = (slot + 1) & (capacity - 1) }
            slots[slot] = moved
        }
    }

    /// Empties `slot`, frees its node, and moves later nodes of the probe run back so that every lookup
    /// still finds them (deletion without tombstones).
    private mutating func remove(slot: Int) {
        release(slots[slot].position)
        count -= 1
        let mask = slots.count - 1
        var hole = slot
        var next = (slot + 1) & mask
        while !slots[next].isEmpty {
            let start = home(slots[next].tag)
            // The node at `next` may move into the hole unless its home lies cyclically in (hole, next].
            let between = hole <= next ? (start > hole && start <= next) : (start > hole || start <= next)
            if !between {
                slots[hole] = slots[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        slots[hole] = .empty
    }

    // MARK: The recency list

    /// Unlinks the node at `position`, forgets its entry and puts it on the free list.
    private mutating func release(_ position: Int32) {
        unlink(position)
        let (chunk, offset) = Self.place(position)
        chunks[chunk][offset].name = .none
        chunks[chunk][offset].rare = nil
        chunks[chunk][offset].older = firstFree
        firstFree = position
    }

    private mutating func unlink(_ position: Int32) {
        let (chunk, offset) = Self.place(position)
        let (older, newer) = (chunks[chunk][offset].older, chunks[chunk][offset].newer)
        if older >= 0 {
            let (olderChunk, olderOffset) = Self.place(older)
            chunks[olderChunk][olderOffset].newer = newer
        } else {
            oldest = newer
        }
        if newer >= 0 {
            let (newerChunk, newerOffset) = Self.place(newer)
            chunks[newerChunk][newerOffset].older = older
        } else {
            newest = older
        }
    }

    private mutating func linkAsNewest(_ position: Int32) {
        let (chunk, offset) = Self.place(position)
        chunks[chunk][offset].older = newest
        chunks[chunk][offset].newer = -1
        if newest >= 0 {
            let (newestChunk, newestOffset) = Self.place(newest)
            chunks[newestChunk][newestOffset].newer = position
        } else {
            oldest = position
        }
        newest = position
    }
}
