/// What network changes did (issue 30): the changes seen, and the background refreshes of names in use
/// they caused, by outcome. Counted by the service's reaction; rendered by ``ServiceMetrics``.
public final class NetworkMetrics: Sendable {
    /// A refresh's outcome: an upstream answered, or it did not (retried while the network settles).
    public enum RefreshOutcome: Int, Sendable, CaseIterable {
        case answered
        case failed

        var label: String { self == .answered ? "answered" : "failed" }
    }

    private let changes = AtomicCounters<1>()
    private let refreshes = AtomicCounters<2>()

    public init() {}

    /// Counts one network change (one debounced burst).
    public func countChange() {
        changes.add(0)
    }

    /// Counts one refresh of a name with `outcome`.
    public func countRefresh(_ outcome: RefreshOutcome) {
        refreshes.add(outcome.rawValue)
    }

    /// Network changes seen.
    public var changeCount: UInt64 { changes[0] }

    /// Refreshes with `outcome`.
    public func refreshCount(_ outcome: RefreshOutcome) -> UInt64 { refreshes[outcome.rawValue] }

    func write(into exposition: inout MetricsExposition) {
        exposition.family("hostpin_network_changes_total", .counter,
                          help: "Network changes seen (address, link or default route; debounced bursts).")
        exposition.sample("hostpin_network_changes_total", changes[0])
        let name = "hostpin_network_refreshes_total"
        exposition.family(name, .counter, help: "Names in use refreshed after network changes, by outcome.")
        for outcome in RefreshOutcome.allCases {
            exposition.sample(name, labels: [("outcome", outcome.label)], refreshes[outcome.rawValue])
        }
    }
}
