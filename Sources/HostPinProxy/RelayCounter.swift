import HostPin

/// Where body bytes relayed in one direction are counted as they pass (``HostPin/ProxyMetrics``), so a
/// long download or tunnel shows in the metrics while it runs, not only when it ends.
struct RelayCounter: Sendable {
    let metrics: ProxyMetrics
    let direction: ProxyMetrics.Direction

    /// The counter for `direction` in `metrics`; `nil` without metrics.
    init?(_ metrics: ProxyMetrics?, _ direction: ProxyMetrics.Direction) {
        guard let metrics else { return nil }
        self.metrics = metrics
        self.direction = direction
    }

    func add(_ count: Int) {
        metrics.addRelayed(count, direction)
    }
}
