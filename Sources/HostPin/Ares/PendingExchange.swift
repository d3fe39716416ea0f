import Synchronization

/// Queries handed to a transport together, waiting for their replies; it hands every outcome over exactly
/// once: by resuming the caller (``perform(_:deadline:submit:)``) or by calling a completion
/// (``start(_:deadline:submit:completion:)``).
///
/// One continuation, or one call, for all the queries: asking for A and AAAA costs the caller one
/// suspension and no child tasks. c-ares has no per-query cancel (`ares_cancel` fails every query on the
/// channel), so cancelling hands over `.cancelled` at once and leaves the queries to finish on the
/// channel; their late completions then find the exchange finished and are ignored.
final class PendingExchange: InterruptibleExchange {
    /// The DNS messages to send, in wire format.
    let queries: [[UInt8]]

    /// Who gets the outcomes.
    private enum Receiver {
        case continuation(CheckedContinuation<[ExchangeOutcome], Never>)
        case completion(@Sendable ([ExchangeOutcome]) -> Void)

        func deliver(_ outcomes: [ExchangeOutcome]) {
            switch self {
            case .continuation(let continuation): continuation.resume(returning: outcomes)
            case .completion(let completion): completion(outcomes)
            }
        }
    }

    private enum State {
        case created
        case waiting(Receiver, outcomes: [ExchangeOutcome?], missing: Int)
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
                if exchange.wait(for: .continuation(continuation)) { submit(exchange) }
            }
        } onCancel: {
            exchange.cancel()
        }
    }

    /// Sends `queries` by handing one exchange to `submit` without waiting: `completion` gets every
    /// outcome once each query has one, or every outcome `.cancelled` when `deadline` runs out first. It
    /// runs on the thread that ends the exchange (the transport's, the budget timer's, or the caller's
    /// when the budget has run out already), so it must not block.
    static func start(_ queries: [[UInt8]], deadline: ResolutionDeadline?, submit: (PendingExchange) -> Void,
                      completion: @escaping @Sendable ([ExchangeOutcome]) -> Void) {
        guard !queries.isEmpty else { return completion([]) }
        let exchange = PendingExchange(queries: queries)
        if let deadline, !deadline.admit(exchange) { return completion(exchange.allCancelled) }
        if exchange.wait(for: .completion(completion)) { submit(exchange) }
    }

    private var allCancelled: [ExchangeOutcome] { Array(repeating: .cancelled, count: queries.count) }

    /// Installs the receiver; returns false (after handing it `.cancelled`) when the exchange was cancelled
    /// before it got here.
    private func wait(for receiver: Receiver) -> Bool {
        let accepted = state.withLock { state in
            guard case .created = state else { return false }
            state = .waiting(receiver, outcomes: Array(repeating: nil, count: queries.count), missing: queries.count)
            return true
        }
        if !accepted { receiver.deliver(allCancelled) }
        return accepted
    }

    /// Records the outcome of the query at `index`; the last one hands every outcome over, unless they
    /// were handed over already.
    func finish(_ index: Int, with outcome: ExchangeOutcome) {
        let deliver = state.withLock { state -> (Receiver, [ExchangeOutcome])? in
            guard case .waiting(let receiver, var outcomes, let missing) = state, outcomes[index] == nil else {
                return nil
            }
            state = .finished  // drops the state's copy of `outcomes`, so the write below does not copy it
            outcomes[index] = outcome
            guard missing == 1 else {
                state = .waiting(receiver, outcomes: outcomes, missing: missing - 1)
                return nil
            }
            return (receiver, outcomes.map { $0 ?? .cancelled })
        }
        if let (receiver, outcomes) = deliver { receiver.deliver(outcomes) }
    }

    /// Hands over every outcome `.cancelled`, unless they were handed over already.
    func cancel() {
        let receiver = state.withLock { state -> Receiver? in
            defer { state = .finished }
            if case .waiting(let receiver, _, _) = state { return receiver }
            return nil
        }
        receiver?.deliver(allCancelled)
    }
}
