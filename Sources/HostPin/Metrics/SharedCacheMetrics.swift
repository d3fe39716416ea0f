/// What the shared cache (Redis) did for a running service: `hostpin_shared_cache_lookups_total{result}`,
/// `hostpin_shared_cache_writes_total`, `hostpin_shared_cache_lookup_seconds`, and the store's
/// connection: `hostpin_shared_cache_connected`, `hostpin_shared_cache_connections_total` (README.md,
/// "Metrics").
///
/// Counted by ``SharedCache`` when a store's reply arrives: one lookup per miss of the memory cache that
/// asked the store. Relaxed atomic increments only. Thread-safe.
public final class SharedCacheMetrics: Sendable {
    /// The `result` label's values.
    public enum Result: Int, Sendable, CaseIterable {
        /// A valid value, used.
        case hit
        /// No value under the key.
        case miss
        /// The store failed or timed out (down, hung, its queue full).
        case error
        /// A value whose tag did not match (written without the secret, or changed): ignored.
        case badTag
        /// A value refused for another reason: another writer's policy, expired, unvalidated, malformed.
        case rejected

        var label: String {
            switch self {
            case .hit: "hit"
            case .miss: "miss"
            case .error: "error"
            case .badTag: "bad_tag"
            case .rejected: "rejected"
            }
        }
    }

    /// The latency histogram's upper bounds, in seconds.
    static let bounds: [Double] = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2]

    private let results = AtomicCounters<5>()
    /// Values handed to the store, and lookups answered after the patience ran out (the upstream asked too).
    private let other = AtomicCounters<2>()
    /// One count per bound and one for larger, then the sum in microseconds.
    private let latency = AtomicCounters<11>()

    /// The store whose connection is reported; `nil` reports none.
    private let store: (any SharedCacheStore)?

    /// Metrics for a shared cache in `store` (whose connection they report, when given).
    public init(store: (any SharedCacheStore)? = nil) {
        self.store = store
        precondition(Result.allCases.count == 5 && Self.bounds.count == 9, "the counters hold every label")
    }

    /// Counts one lookup's `result`, its reply `microseconds` after it was asked.
    public func record(_ result: Result, microseconds: UInt64) {
        results.add(result.rawValue)
        let seconds = Double(microseconds) / 1e6
        latency.add(Self.bounds.firstIndex { seconds <= $0 } ?? Self.bounds.count)
        latency.add(10, microseconds)
    }

    /// Counts one value handed to the store.
    public func recordWrite() { other.add(0) }

    /// Counts one lookup whose patience ran out before the store answered.
    public func recordLate() { other.add(1) }

    /// The lookups counted with `result`.
    public func count(_ result: Result) -> UInt64 { results[result.rawValue] }

    /// The values handed to the store.
    public var writes: UInt64 { other[0] }

    /// The lookups whose patience ran out first.
    public var late: UInt64 { other[1] }

    func write(into exposition: inout MetricsExposition) {
        let lookups = "hostpin_shared_cache_lookups_total"
        exposition.family(lookups, .counter, help: "Lookups in the shared cache (Redis) after a miss in memory, by result.")
        for result in Result.allCases { exposition.sample(lookups, labels: [("result", result.label)], count(result)) }
        let writes = "hostpin_shared_cache_writes_total"
        exposition.family(writes, .counter, help: "Answers from the upstreams handed to the shared cache.")
        exposition.sample(writes, self.writes)
        let late = "hostpin_shared_cache_late_total"
        exposition.family(late, .counter, help: "Shared-cache lookups not answered within the patience (the upstreams were asked too).")
        exposition.sample(late, self.late)
        if let store {
            let connected = "hostpin_shared_cache_connected"
            exposition.family(connected, .gauge, help: "Whether the shared cache's store (Redis) is connected now: 1 or 0.")
            exposition.sample(connected, store.isConnected ? 1 : 0)
            let connections = "hostpin_shared_cache_connections_total"
            exposition.family(connections, .counter, help: "Connections made to the shared cache's store, reconnections included.")
            exposition.sample(connections, store.connectionCount)
        }
        let seconds = "hostpin_shared_cache_lookup_seconds"
        exposition.family(seconds, .histogram, help: "Time from a shared-cache lookup to the store's reply.")
        exposition.histogram(seconds, [], bounds: Self.bounds, counts: (0...Self.bounds.count).map { latency[$0] },
                             sum: Double(latency[10]) / 1e6)
    }
}
