/// Whether a running HostPin service can answer from its trusted upstreams: what `/healthz` reports
/// (README.md, "Metrics").
public struct ServiceHealth: Sendable, Hashable, CustomStringConvertible {
    /// True while the service runs and at least one trusted upstream is healthy (not held down).
    public let isHealthy: Bool
    /// `ok`, or why not, in one line: `stopping`, or each upstream's state when none is healthy.
    public let reason: String

    /// The health of a service that is `stopping` or not, with its upstreams in `health`.
    public init(stopping: Bool, upstreams health: UpstreamHealth) {
        let statuses = health.upstreams.indices.map { health.status(at: $0) }
        if stopping {
            (isHealthy, reason) = (false, "stopping")
        } else if statuses.contains(.healthy) {
            (isHealthy, reason) = (true, "ok")
        } else {
            let states = zip(health.upstreams, statuses).map { "\($0): \($1)" }.joined(separator: "; ")
            (isHealthy, reason) = (false, "no trusted upstream is healthy (\(states))")
        }
    }

    public var description: String { reason }
}
