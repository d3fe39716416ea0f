import Synchronization

/// What one c-ares query ended with.
enum AresOutcome: Sendable {
    case answer(AddrinfoReply)
    case status(AresStatus)
    case cancelled
}

/// One `ares_getaddrinfo` call waiting for its callback; it resumes its caller exactly once.
///
/// c-ares has no per-query cancel (`ares_cancel` fails every query on the channel), so cancelling
/// resumes the caller at once and leaves the query to finish on the channel; its late callback then
/// finds the query finished and is ignored.
final class PendingQuery: Sendable {
    let name: String
    let family: AddressFamily

    private enum State {
        case created
        case waiting(CheckedContinuation<AresOutcome, Never>)
        case finished
    }

    private let state = Mutex(State.created)

    init(name: String, family: AddressFamily) {
        self.name = name
        self.family = family
    }

    /// Installs the caller's continuation; returns false (after resuming it with `.cancelled`) when
    /// the query was cancelled before it got here.
    func wait(with continuation: CheckedContinuation<AresOutcome, Never>) -> Bool {
        let accepted = state.withLock { state in
            guard case .created = state else { return false }
            state = .waiting(continuation)
            return true
        }
        if !accepted { continuation.resume(returning: .cancelled) }
        return accepted
    }

    /// Resumes the caller with `outcome` unless it was resumed already.
    func finish(_ outcome: AresOutcome) {
        let continuation = state.withLock { state -> CheckedContinuation<AresOutcome, Never>? in
            defer { state = .finished }
            if case .waiting(let continuation) = state { return continuation }
            return nil
        }
        continuation?.resume(returning: outcome)
    }
}
