/// Which trusted answers a ``LocalResolverWatch`` compares, and the comparisons waiting for its worker:
/// at most one per name per ``nameInterval``, at most one per ``overallInterval`` over all names, at most
/// ``capacity`` waiting. Pure: the caller passes the time (monotonic nanoseconds) and holds the lock.
///
/// An offer is judged in that order: a name compared (or queued) within the name interval is skipped,
/// then one arriving within the overall interval of the last one queued, then one that finds the queue
/// full is dropped; only a queued offer counts against either interval. Memory stays bounded: names are
/// remembered only while their interval runs (a sweep drops the others once the table has doubled), and
/// at most one name enters per overall interval, so the table holds about name interval ÷ overall
/// interval names (3 600 with the defaults).
struct WatchQueue {
    /// One comparison to make: the name and family, and what the trusted side said.
    struct Item: Sendable, Hashable {
        let name: HostName
        let family: AddressFamily
        let trusted: TrustedAnswer
    }

    /// At most one comparison per name per this many nanoseconds.
    let nameInterval: UInt64
    /// At most one comparison per this many nanoseconds overall.
    let overallInterval: UInt64
    /// The most comparisons waiting.
    let capacity: Int

    /// When each name was last queued, while its interval runs (older ones until the next sweep).
    private var lastQueued: [HostName: UInt64] = [:]
    /// When the last comparison was queued.
    private var lastQueuedAt: UInt64?
    /// The comparisons waiting, oldest first.
    private var waiting: [Item] = []
    /// The table size that triggers the next sweep.
    private var sweepAt = Self.minimumSweepSize

    private static let minimumSweepSize = 1024

    init(nameInterval: Duration, overallInterval: Duration, capacity: Int) {
        self.nameInterval = Self.nanoseconds(nameInterval)
        self.overallInterval = Self.nanoseconds(overallInterval)
        self.capacity = max(1, capacity)
    }

    /// The comparisons waiting.
    var count: Int { waiting.count }

    /// The names remembered (for tests of the memory bound).
    var rememberedNames: Int { lastQueued.count }

    /// Judges `item`, offered at `now`, and queues it when it passes.
    mutating func offer(_ item: Item, now: UInt64) -> LocalResolverWatch.Decision {
        if let last = lastQueued[item.name], now &- last < nameInterval { return .recentlyCompared }
        if let last = lastQueuedAt, now &- last < overallInterval { return .rateLimited }
        guard waiting.count < capacity else { return .queueFull }
        if lastQueued.count >= sweepAt { sweep(now: now) }
        lastQueued[item.name] = now
        lastQueuedAt = now
        waiting.append(item)
        return .queued
    }

    /// Takes the oldest comparison waiting.
    mutating func next() -> Item? {
        waiting.isEmpty ? nil : waiting.removeFirst()
    }

    /// Drops every comparison waiting.
    mutating func removeAll() {
        waiting.removeAll()
    }

    /// Forgets the names whose interval has run out; the next sweep waits until the table has doubled.
    private mutating func sweep(now: UInt64) {
        lastQueued = lastQueued.filter { now &- $0.value < nameInterval }
        sweepAt = max(Self.minimumSweepSize, 2 * lastQueued.count)
    }

    /// A duration in nanoseconds, 0 for a negative one, saturating.
    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        let (total, carried) = whole.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000))
        return overflow || carried ? .max : total
    }
}
