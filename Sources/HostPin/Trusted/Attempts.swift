import Synchronization

/// The upstream failures of one resolution so far, readable by the budget timer when it fires.
final class Attempts: Sendable {
    private let recorded = Mutex<[UpstreamFailure]>([])

    func record(_ failure: UpstreamFailure) {
        recorded.withLock { $0.append(failure) }
    }

    var failures: [UpstreamFailure] { recorded.withLock { $0 } }
}
