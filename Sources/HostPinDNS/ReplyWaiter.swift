import Synchronization

/// The continuation a query waits in for its reply, resumed exactly once: by the resolution's completion
/// or by the task's cancellation, whichever comes first (the other is ignored). A cancellation that comes
/// before the continuation is installed is kept and resumes it as soon as it is.
final class ReplyWaiter: Sendable {
    private enum State {
        case waiting
        case installed(CheckedContinuation<DNSResponder.Reply, Never>)
        /// Resumed, or cancelled before anything was installed (the reply to give then).
        case done(DNSResponder.Reply?)
    }

    private let state = Mutex(State.waiting)

    /// Installs `continuation`; `false` (after resuming it) when the wait was cancelled already.
    func install(_ continuation: CheckedContinuation<DNSResponder.Reply, Never>) -> Bool {
        let early = state.withLock { state -> DNSResponder.Reply?? in
            switch state {
            case .waiting:
                state = .installed(continuation)
                return .none
            case .installed, .done(nil):
                return .some(nil)
            case .done(let reply?):
                return .some(reply)
            }
        }
        guard let early else { return true }
        continuation.resume(returning: early ?? .none(nil))
        return false
    }

    /// Resumes the wait with `reply`, unless it was resumed already.
    func resume(_ reply: DNSResponder.Reply) {
        let continuation = state.withLock { state -> CheckedContinuation<DNSResponder.Reply, Never>? in
            switch state {
            case .waiting:
                state = .done(reply)
                return nil
            case .installed(let continuation):
                state = .done(nil)
                return continuation
            case .done:
                return nil
            }
        }
        continuation?.resume(returning: reply)
    }
}
