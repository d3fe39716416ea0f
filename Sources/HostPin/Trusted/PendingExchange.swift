import Synchronization

/// One query handed to a transport and waiting for its reply; it resumes its caller exactly once.
///
/// c-ares has no per-query cancel (`ares_cancel` fails every query on the channel), so cancelling resumes
/// the caller at once and leaves the query to finish on the channel; its late completion then finds the
/// exchange finished and is ignored.
final class PendingExchange: Sendable {
    /// The DNS message to send, in wire format.
    let query: [UInt8]

    private enum State {
        case created
        case waiting(CheckedContinuation<ExchangeOutcome, Never>)
        case finished
    }

    private let state = Mutex(State.created)

    private init(query: [UInt8]) {
        self.query = query
    }

    /// Sends `query` by handing an exchange to `submit` and waits for ``finish(_:)``, for the calling
    /// task's cancellation or for `deadline` to run out, whichever comes first.
    static func perform(_ query: [UInt8], deadline: ResolutionDeadline?,
                        submit: (PendingExchange) -> Void) async -> ExchangeOutcome {
        let exchange = PendingExchange(query: query)
        if let deadline, !deadline.admit(exchange) { return .cancelled }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if exchange.wait(with: continuation) { submit(exchange) }
            }
        } onCancel: {
            exchange.finish(.cancelled)
        }
    }

    /// Installs the caller's continuation; returns false (after resuming it with `.cancelled`) when the
    /// exchange was cancelled before it got here.
    private func wait(with continuation: CheckedContinuation<ExchangeOutcome, Never>) -> Bool {
        let accepted = state.withLock { state in
            guard case .created = state else { return false }
            state = .waiting(continuation)
            return true
        }
        if !accepted { continuation.resume(returning: .cancelled) }
        return accepted
    }

    /// Resumes the caller with `outcome` unless it was resumed already.
    func finish(_ outcome: ExchangeOutcome) {
        let continuation = state.withLock { state -> CheckedContinuation<ExchangeOutcome, Never>? in
            defer { state = .finished }
            if case .waiting(let continuation) = state { return continuation }
            return nil
        }
        continuation?.resume(returning: outcome)
    }
}
