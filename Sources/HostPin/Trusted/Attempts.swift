import Synchronization

/// The upstream failures of one resolution so far, and the upstream being asked now, readable by the
/// budget timer when it fires.
final class Attempts: Sendable {
    private struct State {
        var failures: [UpstreamFailure] = []
        var asking: (upstream: Upstream, index: Int?)?
    }

    private let state = Mutex(State())

    /// `upstream` is being asked now; `index` is its place in the trusted list, `nil` for the fallback.
    func begin(_ upstream: Upstream, index: Int?) {
        state.withLock { $0.asking = (upstream, index) }
    }

    /// The upstream asked last failed.
    func record(_ failure: UpstreamFailure) {
        state.withLock {
            $0.failures.append(failure)
            $0.asking = nil
        }
    }

    /// The failures recorded.
    var failures: [UpstreamFailure] { state.withLock { $0.failures } }

    /// What the budget timer reports: the failures recorded, then the upstream still being asked as timed
    /// out; and that upstream's index in the trusted list, if it is a trusted one.
    func atDeadline() -> (failures: [UpstreamFailure], timedOutIndex: Int?) {
        state.withLock { state in
            guard let asking = state.asking else { return (state.failures, nil) }
            return (state.failures + [UpstreamFailure(upstream: asking.upstream, reason: .timeout)], asking.index)
        }
    }
}
