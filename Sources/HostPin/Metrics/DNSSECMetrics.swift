/// What DNSSEC validation found for the trusted resolutions of a running service:
/// `hostpin_dnssec_answers_total{status}` (README.md, "Metrics").
///
/// One count per resolution the trusted resolver finished with a validated answer — addresses, NXDOMAIN
/// or NODATA — and per reply forwarded for the DNS stub (its other types, and its A and AAAA queries
/// with DO or CD; a CD reply is not validated, so not counted) by its ``DNSSECStatus``, and one `bogus` per resolution that failed because no upstream's
/// answer validated (``ResolutionError/dnssecBogus(_:_:)``); in report mode a bogus answer handed out
/// counts as `bogus` too. Cache hits are not counted (their answer was counted when it was received),
/// nor answers that were not validated (`--dnssec off`). An upstream's bogus answer that the next
/// upstream's valid one replaced is counted per upstream instead
/// (`hostpin_upstream_failures_total{reason="bogus"}`). Counting is one relaxed atomic increment.
/// Thread-safe.
public final class DNSSECMetrics: Sendable {
    /// The `status` label's values.
    public enum Status: Int, Sendable, CaseIterable {
        case secure
        case insecure
        /// No trust anchor covers the name.
        case indeterminate
        case bogus

        /// The status `status` counts as.
        public init(_ status: DNSSECStatus) {
            switch status {
            case .secure: self = .secure
            case .insecure: self = .insecure
            case .indeterminate: self = .indeterminate
            case .bogus: self = .bogus
            }
        }

        var label: String {
            switch self {
            case .secure: "secure"
            case .insecure: "insecure"
            case .indeterminate: "indeterminate"
            case .bogus: "bogus"
            }
        }
    }

    private let counts = AtomicCounters<4>()

    /// Nothing counted yet.
    public init() {
        precondition(Status.allCases.count == 4, "the counters hold every status")
    }

    /// Counts the end of one trusted resolution: its answer's status, or `bogus` for a
    /// ``ResolutionError/dnssecBogus(_:_:)`` failure; nothing for an answer that was not validated or
    /// another failure.
    public func record(_ outcome: Result<ResolutionOutcome, ResolutionError>) {
        switch outcome {
        case .success(let outcome):
            let status = switch outcome.answer {
            case .addresses(let resolution): resolution.dnssec
            case .negative(let negative): negative.dnssec
            }
            if let status { counts.add(Status(status).rawValue) }
        case .failure(.dnssecBogus):
            counts.add(Status.bogus.rawValue)
        case .failure:
            break
        }
    }

    /// Counts the end of one forwarded exchange (``TrustedResolver/forwardValidated(_:checkingDisabled:)``)
    /// as ``record(_:)`` counts a resolution: the reply's status, or `bogus` for a
    /// ``ResolutionError/dnssecBogus(_:_:)`` failure.
    public func record(forwarded outcome: Result<ForwardedAnswer, ResolutionError>) {
        switch outcome {
        case .success(let answer):
            if let status = answer.dnssec { counts.add(Status(status).rawValue) }
        case .failure(.dnssecBogus):
            counts.add(Status.bogus.rawValue)
        case .failure:
            break
        }
    }

    /// The resolutions counted with `status`.
    public func count(_ status: Status) -> UInt64 {
        counts[status.rawValue]
    }

    func write(into exposition: inout MetricsExposition) {
        let name = "hostpin_dnssec_answers_total"
        exposition.family(name, .counter,
                          help: "Trusted resolutions whose answer was validated with DNSSEC, by result (cache hits not counted).")
        for status in Status.allCases {
            exposition.sample(name, labels: [("status", status.label)], count(status))
        }
    }
}
