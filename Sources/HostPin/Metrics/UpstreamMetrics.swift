import Synchronization

/// What each trusted upstream of a ``TrustedResolver`` was asked and how it went: DNS queries sent,
/// failures by reason, and the round-trip time of every query that got a reply (README.md, "Metrics").
///
/// One ``Meter`` per upstream, in configuration order; the upstreams are the configured ones, so the
/// `upstream` label has as many values as the configuration has upstreams. Queries to the opted-in
/// untrusted fallback are not counted here. Counting is relaxed atomic increments. Thread-safe.
public final class UpstreamMetrics: Sendable {
    /// Why a query got no usable reply: ``UpstreamFailure/Reason`` folded into a few label values.
    public enum FailureReason: Int, Sendable, CaseIterable {
        /// No reply in time, after every try (or the resolution's budget ran out waiting for it).
        case timeout
        /// SERVFAIL.
        case servfail
        /// REFUSED.
        case refused
        /// The port refused, or no connection could be made (an encrypted upstream without an address).
        case unreachable
        /// The reply is not a well-formed response to the query, or its length is impossible.
        case malformed
        /// DoH or DoT: the TLS handshake failed (untrusted certificate, another name, no pin matches).
        case tls
        /// DoH: an HTTP status other than 200, or another content type.
        case http
        /// DoH or DoT: the connection closed, stalled or failed during the exchange.
        case connection
        /// Anything else (a c-ares status, a query that could not be built).
        case other
        /// The answer failed DNSSEC validation (bogus).
        case bogus

        /// The reason `reason` counts as.
        public init(_ reason: UpstreamFailure.Reason) {
            switch reason {
            case .timeout: self = .timeout
            case .servfail: self = .servfail
            case .refused: self = .refused
            case .unreachable: self = .unreachable
            case .badResponse: self = .malformed
            case .other: self = .other
            // Only the untrusted fallback's answers are judged so, and it is not counted here.
            case .hijackedAnswer: self = .other
            case .dnssecBogus: self = .bogus
            case .encrypted(let failure):
                switch failure {
                case .timeout: self = .timeout
                case .noBootstrapAddress, .connectFailed: self = .unreachable
                case .untrustedCertificate, .certificateNameMismatch, .pinMismatch, .tlsFailed: self = .tls
                case .httpStatus, .wrongContentType: self = .http
                case .replyTooLong, .replyTooShort: self = .malformed
                case .transportClosed, .replyCutShort, .connectionClosed, .connectionStalled, .transferFailed, .cancelled:
                    self = .connection
                case .badQuery: self = .other
                }
            }
        }

        var label: String {
            switch self {
            case .timeout: "timeout"
            case .servfail: "servfail"
            case .refused: "refused"
            case .unreachable: "unreachable"
            case .malformed: "malformed"
            case .tls: "tls"
            case .http: "http"
            case .connection: "connection"
            case .other: "other"
            case .bogus: "bogus"
            }
        }
    }

    /// The upper bounds of the round-trip-time histogram's buckets, in seconds: from a loopback reply
    /// (half a millisecond) to a slow encrypted exchange (10 s).
    public static let roundTripBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    /// One upstream's counters.
    public final class Meter: Sendable {
        private let queries = Atomic<UInt64>(0)
        private let failures = AtomicCounters<10>()
        /// Each bucket's own count; the last one is above every bound.
        private let buckets = AtomicCounters<15>()
        private let roundTripNanoseconds = Atomic<UInt64>(0)

        init() {
            precondition(FailureReason.allCases.count == 10 && roundTripBuckets.count + 1 == 15,
                         "the counters hold every reason and bucket")
        }

        /// `count` queries were sent.
        func sent(_ count: Int) {
            queries.add(UInt64(count), ordering: .relaxed)
        }

        /// A query failed.
        func failed(_ reason: FailureReason) {
            failures.add(reason.rawValue)
        }

        /// A query got a reply (well formed or not) `roundTrip` after it was sent.
        func replied(after roundTrip: Duration) {
            let nanoseconds = roundTrip.nanosecondsClampedAtZero
            let seconds = Double(nanoseconds) / 1e9
            buckets.add(UpstreamMetrics.roundTripBuckets.firstIndex { seconds <= $0 } ?? UpstreamMetrics.roundTripBuckets.count)
            roundTripNanoseconds.add(nanoseconds, ordering: .relaxed)
        }

        /// What the meter holds now.
        public var snapshot: Snapshot {
            Snapshot(queries: queries.load(ordering: .relaxed),
                     failures: Dictionary(uniqueKeysWithValues: FailureReason.allCases.map { ($0, failures[$0.rawValue]) }),
                     roundTripBuckets: (0..<15).map { buckets[$0] },
                     roundTripSeconds: Double(roundTripNanoseconds.load(ordering: .relaxed)) / 1e9)
        }
    }

    /// One upstream's counts at one moment.
    public struct Snapshot: Sendable, Hashable {
        /// DNS queries sent (A and AAAA for one name are two).
        public var queries: UInt64
        /// Queries that got no usable reply, by reason (every reason present, zeros included).
        public var failures: [FailureReason: UInt64]
        /// Replies by round-trip time: each bucket of ``UpstreamMetrics/roundTripBuckets`` on its own
        /// (not cumulative), then those slower than the last bound.
        public var roundTripBuckets: [UInt64]
        /// The round-trip times of those replies added up, in seconds.
        public var roundTripSeconds: Double

        /// The replies timed.
        public var replies: UInt64 { roundTripBuckets.reduce(0, +) }
    }

    /// The upstreams measured, in configuration order.
    public let upstreams: [Upstream]
    private let meters: [Meter]

    /// A meter for each of `upstreams`.
    public init(upstreams: [Upstream]) {
        self.upstreams = upstreams
        meters = upstreams.map { _ in Meter() }
    }

    /// The meter of the upstream at `index` in ``upstreams``.
    func meter(at index: Int) -> Meter {
        meters[index]
    }

    /// What `upstream` has been asked and how it went; `nil` when it is not one of ``upstreams``.
    public func snapshot(of upstream: Upstream) -> Snapshot? {
        upstreams.firstIndex(of: upstream).map { meters[$0].snapshot }
    }

    /// Each upstream's `description`; one listed twice gets ` #2` on its second entry, so that no two
    /// series share their labels.
    static func labelValues(_ upstreams: [Upstream]) -> [String] {
        var seen: [String: Int] = [:]
        return upstreams.map { upstream in
            let text = upstream.description
            seen[text, default: 0] += 1
            return seen[text] == 1 ? text : "\(text) #\(seen[text]!)"
        }
    }

    /// Writes the query, failure and round-trip families, and the health gauges from `health`.
    func write(into exposition: inout MetricsExposition, health: UpstreamHealth) {
        Self.write([(nil, self, health)], into: &exposition)
    }

    /// Writes each family once for every upstream list in `lists`: the default list's samples labelled
    /// by `upstream` alone, each route's (split DNS) by `upstream` and `route` (its domains, comma-separated).
    static func write(_ lists: [(route: String?, metrics: UpstreamMetrics, health: UpstreamHealth)],
                      into exposition: inout MetricsExposition) {
        let snapshots = lists.map { $0.metrics.meters.map(\.snapshot) }
        let labels = lists.map { list in
            labelValues(list.metrics.upstreams).map { [("upstream", $0)] + (list.route.map { [("route", $0)] } ?? []) }
        }
        let statuses = lists.map { list in list.metrics.upstreams.indices.map { list.health.status(at: $0) } }
        exposition.family("hostpin_upstream_queries_total", .counter,
                          help: "DNS queries sent to each trusted upstream (A and AAAA for one name are two).")
        for (labels, snapshots) in zip(labels, snapshots) {
            for (label, snapshot) in zip(labels, snapshots) {
                exposition.sample("hostpin_upstream_queries_total", labels: label, snapshot.queries)
            }
        }
        exposition.family("hostpin_upstream_failures_total", .counter,
                          help: "Queries to each trusted upstream that got no usable reply, by reason.")
        for (labels, snapshots) in zip(labels, snapshots) {
            for (label, snapshot) in zip(labels, snapshots) {
                for reason in FailureReason.allCases {
                    exposition.sample("hostpin_upstream_failures_total", labels: label + [("reason", reason.label)],
                                      snapshot.failures[reason] ?? 0)
                }
            }
        }
        exposition.family("hostpin_upstream_round_trip_seconds", .histogram,
                          help: "Time from sending a query to each trusted upstream to its reply, in seconds.")
        for (labels, snapshots) in zip(labels, snapshots) {
            for (label, snapshot) in zip(labels, snapshots) {
                exposition.histogram("hostpin_upstream_round_trip_seconds", label, bounds: roundTripBuckets,
                                     counts: snapshot.roundTripBuckets, sum: snapshot.roundTripSeconds)
            }
        }
        exposition.family("hostpin_upstream_healthy", .gauge,
                          help: "1 when the trusted upstream is asked in preference order, 0 while it is held down after failures "
                              + "across names, or SERVFAIL or REFUSED for 10 distinct names within 10 s.")
        for (labels, statuses) in zip(labels, statuses) {
            for (label, status) in zip(labels, statuses) {
                exposition.sample("hostpin_upstream_healthy", labels: label, status == .healthy ? 1 : 0)
            }
        }
        exposition.family("hostpin_upstream_consecutive_failures", .gauge,
                          help: "Hold-downs of the trusted upstream in a row (0 once it answers again).")
        for (labels, statuses) in zip(labels, statuses) {
            for (label, status) in zip(labels, statuses) {
                let failures = switch status {
                case .healthy: 0
                case .heldDown(let failures, _), .probing(let failures): failures
                }
                exposition.sample("hostpin_upstream_consecutive_failures", labels: label, failures)
            }
        }
    }
}
