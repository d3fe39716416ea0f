/// A dictionary whose entries each remember when they were last written, bounded in count (the entry
/// written longest ago goes first) and in age (an entry older than ``lifetime`` is treated as absent and
/// dropped when met). Pure: the time is passed in.
///
/// Writes are queued in write order beside the dictionary, so finding the oldest is the queue's head,
/// not a scan of 10 000 entries; a key written again leaves a stale place in the queue, skipped when met
/// and compacted away once stale places outnumber live ones.
struct RecencyTable<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Entry: Sendable {
        var value: Value
        var written: ContinuousClock.Instant
        /// The entry's place in ``order``: a queued place with another number is stale.
        var sequence: UInt64
    }

    /// The most entries kept.
    let capacity: Int
    /// How long an entry lasts after its last write.
    let lifetime: Duration
    private var entries: [Key: Entry] = [:]
    /// Keys in write order (oldest first) from ``head`` on, each with the sequence number it was written with.
    private var order: [(key: Key, sequence: UInt64)] = []
    private var head = 0
    private var nextSequence: UInt64 = 0

    init(capacity: Int, lifetime: Duration) {
        self.capacity = max(1, capacity)
        self.lifetime = lifetime
    }

    /// How many entries are held, expired ones not yet dropped included.
    var count: Int { entries.count }

    /// The value under `key` unless it expired by `now`.
    func value(for key: Key, at now: ContinuousClock.Instant) -> Value? {
        guard let entry = entries[key], !isExpired(entry, at: now) else { return nil }
        return entry.value
    }

    /// Writes the value `update` makes of the current one (`nil` when absent or expired) at `now`,
    /// dropping expired entries and, when full, the one written longest ago.
    mutating func update(_ key: Key, at now: ContinuousClock.Instant, _ update: (Value?) -> Value) {
        dropExpired(at: now)
        let current = entries[key].flatMap { isExpired($0, at: now) ? nil : $0.value }
        if entries[key] == nil {
            while entries.count >= capacity, dropOldest() {}
        }
        let sequence = nextSequence
        nextSequence += 1
        entries[key] = Entry(value: update(current), written: now, sequence: sequence)
        order.append((key, sequence))
        compactIfStale()
    }

    /// Forgets every entry.
    mutating func removeAll() {
        entries = [:]
        order = []
        head = 0
    }

    private func isExpired(_ entry: Entry, at now: ContinuousClock.Instant) -> Bool {
        now - entry.written >= lifetime
    }

    /// Drops entries from the oldest while they have expired (writes are timed in order, bar a caller
    /// racing another for the lock; a late one is still expired on reading).
    private mutating func dropExpired(at now: ContinuousClock.Instant) {
        while head < order.count {
            let queued = order[head]
            guard let entry = entries[queued.key], entry.sequence == queued.sequence else {
                head += 1
                continue
            }
            guard isExpired(entry, at: now) else { return }
            entries[queued.key] = nil
            head += 1
        }
    }

    /// Drops the live entry written longest ago; `false` when there is none.
    private mutating func dropOldest() -> Bool {
        while head < order.count {
            let queued = order[head]
            head += 1
            if let entry = entries[queued.key], entry.sequence == queued.sequence {
                entries[queued.key] = nil
                return true
            }
        }
        return false
    }

    /// Rebuilds the queue from the live entries once most of it is stale, so repeated writes to the same
    /// keys keep it within about twice the entries; the places before ``head`` go once they are half of it.
    private mutating func compactIfStale() {
        if head > 64, head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
        guard order.count - head > 2 * entries.count + 64 else { return }
        order = entries.map { (key: $0.key, sequence: $0.value.sequence) }.sorted { $0.sequence < $1.sequence }
        head = 0
    }
}
