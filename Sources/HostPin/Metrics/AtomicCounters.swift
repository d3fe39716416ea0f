import Synchronization

/// A fixed number of counters, each a relaxed atomic: what a metric with a closed set of label values
/// increments on a hot path (one `lock add`, no lock, no allocation). Stored inline in the object, so a
/// family of counters costs one allocation.
///
/// Relaxed ordering is enough: each counter only grows, and a scrape that reads one a moment before an
/// increment lands reports it on the next scrape.
final class AtomicCounters<let count: Int>: Sendable {
    private let values: InlineArray<count, Atomic<UInt64>> = InlineArray { _ in Atomic<UInt64>(0) }

    init() {}

    /// Adds `amount` to the counter at `index` (0 ..< count).
    func add(_ index: Int, _ amount: UInt64 = 1) {
        values[index].add(amount, ordering: .relaxed)
    }

    /// The counter at `index` now.
    subscript(index: Int) -> UInt64 {
        values[index].load(ordering: .relaxed)
    }
}
