import Foundation
import Synchronization

/// The names a ``LocalResolverWatch`` found hijacked, each with when: what the status page
/// (`/status.json`) and `hostpin ctl status` list, newest first.
///
/// Bounded: the newest ``limit`` findings are kept (1 000 by default), older ones are forgotten, and
/// ``total`` still counts them. The watch reports each name once (``LocalResolverWatch``), so a finding
/// is the first time a name was judged hijacked. Thread-safe: one lock, held to copy or append.
public final class HijackFindings: Sendable {
    /// One name found hijacked.
    public struct Finding: Sendable, Hashable {
        /// The comparison's report: name, family, the local and the trusted answer, the reasons.
        public let report: HijackReport
        /// When the comparison ended (wall clock: it is shown and put in JSON).
        public let foundAt: Date

        public init(report: HijackReport, foundAt: Date) {
            self.report = report
            self.foundAt = foundAt
        }
    }

    /// The most findings kept.
    public let limit: Int

    private struct State {
        var ring: BoundedRing<Finding>
        var total = 0
    }

    private let state: Mutex<State>

    /// No finding yet; keeps the newest `limit` (at least 1).
    public init(limit: Int = 1000) {
        self.limit = max(1, limit)
        state = Mutex(State(ring: BoundedRing(capacity: limit)))
    }

    /// Records `report`, found at `foundAt`; forgets the oldest when ``limit`` are kept.
    public func record(_ report: HijackReport, at foundAt: Date = Date()) {
        let finding = Finding(report: report, foundAt: foundAt)
        state.withLock { state in
            state.total += 1
            state.ring.append(finding)
        }
    }

    /// The findings kept, newest first.
    public var newestFirst: [Finding] {
        state.withLock { $0.ring.oldestFirst }.reversed()
    }

    /// Findings recorded since the start, forgotten ones included.
    public var total: Int { state.withLock { $0.total } }
}
