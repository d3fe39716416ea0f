import Synchronization

/// A count of queries in flight with a ceiling.
final class QueryCount: Sendable {
    private let count = Atomic<Int>(0)
    let maximum: Int

    init(maximum: Int) {
        self.maximum = maximum
    }

    /// Counts one more query; `false` (and nothing counted) when the ceiling is reached.
    func enter() -> Bool {
        if count.add(1, ordering: .relaxed).newValue <= maximum { return true }
        count.subtract(1, ordering: .relaxed)
        return false
    }

    func leave() {
        count.subtract(1, ordering: .relaxed)
    }
}
