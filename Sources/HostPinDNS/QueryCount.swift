import Synchronization

/// A count of queries in flight with a ceiling, which also tells when a burst of them has ended.
final class QueryCount: Sendable {
    /// In flight at once from which a burst is one whose end hands free heap back (``HeapTrim``).
    static let burst = 1024

    private let count = Atomic<Int>(0)
    /// Whether the count has reached ``burst`` since it was last zero.
    private let bursting = Atomic<Bool>(false)
    let maximum: Int

    init(maximum: Int) {
        self.maximum = maximum
    }

    /// Counts one more query; `false` (and nothing counted) when the ceiling is reached.
    func enter() -> Bool {
        let count = count.add(1, ordering: .relaxed).newValue
        if count <= maximum {
            if count >= Self.burst, !bursting.load(ordering: .relaxed) { bursting.store(true, ordering: .relaxed) }
            return true
        }
        self.count.subtract(1, ordering: .relaxed)
        return false
    }

    /// Counts one query less; `true` when that ended a burst: none is left in flight, and ``burst`` or
    /// more were at once since the count was last zero.
    @discardableResult
    func leave() -> Bool {
        guard count.subtract(1, ordering: .relaxed).newValue == 0 else { return false }
        return bursting.exchange(false, ordering: .relaxed)
    }
}
