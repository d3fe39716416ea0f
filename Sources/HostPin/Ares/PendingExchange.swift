import Synchronization

/// Queries handed to a transport together, waiting for their replies; it resumes its caller exactly
/// once, with every outcome.
///
/// One continuation for all the queries: asking for A and AAAA costs the caller one suspension and no
/// child tasks. c-ares has no per-query cancel (`ares_cancel` fails every query on the channel), so
/// cancelling resumes the caller at once and leaves the queries to finish on the channel; their late
/// completions then find the exchange finished and are ignored.
final class PendingExchange: InterruptibleExchange {
    /// The DNS messages to send, in wire format.
    let queries: [[UInt8]]

    private enum State {
        case created
        case waiting(CheckedContinuation<[ExchangeOutcome], Never>, outcomes: [ExchangeOutcome?], missing: Int)
        case finished
    }

    private let state = Mutex(State.created)

    private init(queries: [[UInt8]]) {
        self.queries = queries
    }

    /// Sends `queries` by handing one exchange to `submit` and waits until every query has an outcome
    /// (``finish(_:with:)``), the calling task is cancelled, or `deadline` runs out, whichever comes first.
    static func perform(_ queries: [[UInt8]], deadline: ResolutionDeadline?,
                        submit: (PendingExchange) -> Void) async -> [ExchangeOutcome] {
        guard !queries.isEmpty else { return [] }
        let exchange = PendingExchange(queries: queries)
        if let deadline, !deadline.admit(exchange) { return exchange.allCancelled }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if exchange.wait(with: continuation) { submit(exchange) }
            }
        } onCancel: {
            exchange.cancel()
        }
    }

    private var allCancelled: [ExchangeOutcome] { Array(repeating: .cancelled, count: queries.count) }

    /// Installs the caller's continuation; returns false (after resuming it with `.cancelled`) when the
    /// exchange was cancelled before it got here.
    private func wait(with continuation: CheckedContinuation<[ExchangeOutcome], Never>) -> Bool {
        let accepted = state.withLock { state in
            guard case .created = state else { return false }
            state = .waiting(continuation, outcomes: Array(repeating: nil, count: queries.count),
                             missing: queries.count)
            return true
        }
        if !accepted { continuation.resume(returning: allCancelled) }
        return accepted
    }

    /// Records the outcome of the query at `index`; the last one resumes the caller, unless it was resumed
    /// already.
    func finish(_ index: Int, with outcome: ExchangeOutcome) {
        let resume = state.withLock { state -> (CheckedContinuation<[ExchangeOutcome], Never>, [ExchangeOutcome])? in
            guard case .waiting(let continuation, var outcomes, let missing) = state, outcomes[index] == nil else {
                return nil
            }
            state = .finished  // drops the state's copy of `outcomes`, so the write below does not copy it
            outcomes[index] = outcome
            guard missing == 1 else {
                state = .waiting(continuation, outcomes: outcomes, missing: missing - 1)
                return nil
            }
            return (continuation, outcomes.map { $0 ?? .cancelled })
        }
        if let (continuation, outcomes) = resume { continuation.resume(returning: outcomes) }
    }

    /// Resumes the caller with every outcome `.cancelled`, unless it was resumed already.
    func cancel() {
        let continuation = state.withLock { state -> CheckedContinuation<[ExchangeOutcome], Never>? in
            defer { state = .finished }
            if case .waiting(let continuation, _, _) = state { return continuation }
            return nil
        }
        continuation?.resume(returning: allCancelled)
    }
}
