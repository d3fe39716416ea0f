/// The event loop's pending timers: a binary min-heap ordered by deadline. A pure value; the loop keeps
/// it under its lock.
struct TimerHeap {
    /// One timer: when it fires, and for which registration and direction.
    struct Entry {
        let deadline: ContinuousClock.Instant
        let token: UInt64
        let direction: IODirection
    }

    private var entries: [Entry] = []

    var count: Int { entries.count }

    /// The earliest deadline, if any timer is pending.
    var earliest: ContinuousClock.Instant? { entries.first?.deadline }

    mutating func push(_ entry: Entry) {
        entries.append(entry)
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].deadline < entries[parent].deadline else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns every entry whose deadline is not after `now`, earliest first.
    mutating func popDue(_ now: ContinuousClock.Instant) -> [Entry] {
        var due: [Entry] = []
        while let first = entries.first, first.deadline <= now {
            due.append(first)
            let last = entries.removeLast()
            if !entries.isEmpty {
                entries[0] = last
                siftDown(from: 0)
            }
        }
        return due
    }

    /// Keeps only the entries for which `keep` is true (used to drop the timers of closed registrations).
    mutating func retain(where keep: (Entry) -> Bool) {
        entries = entries.filter(keep)
        for index in stride(from: entries.count / 2 - 1, through: 0, by: -1) {
            siftDown(from: index)
        }
    }

    private mutating func siftDown(from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < entries.count, entries[left].deadline < entries[smallest].deadline { smallest = left }
            if right < entries.count, entries[right].deadline < entries[smallest].deadline { smallest = right }
            guard smallest != parent else { return }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
