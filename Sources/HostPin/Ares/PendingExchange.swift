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

    /// Mutated in place under the lock: a reply records its outcome without copying the list (an enum
    /// with the list as its payload copied it on every change).
    private struct State {
        /// Set by ``wait(for:)``, taken by whoever hands the outcomes over: `nil` before and after.
        var receiver: Receiver?
        /// Whether the outcomes were handed over (or the exchange cancelled).
        var finished = false
        var outcomes: [ExchangeOutcome?] = []
        var missing = 0
    }

    private let state = Mutex(State())

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
            guard !state.finished else { return false }
            state.receiver = receiver
            state.outcomes = Array(repeating: nil, count: queries.count)
            state.missing = queries.count
            return true
        }
        if !accepted { receiver.deliver(allCancelled) }
        return accepted
    }

    /// Records the outcome of the query at `index`; the last one hands every outcome over, unless they
    /// were handed over already.
    func finish(_ index: Int, with outcome: ExchangeOutcome) {
        let deliver = state.withLock { state -> (Receiver, [ExchangeOutcome])? in
            guard !state.finished, state.receiver != nil, state.outcomes[index] == nil else { return nil }
            state.outcomes[index] = outcome
            state.missing -= 1
            guard state.missing == 0, let receiver = state.receiver.take() else { return nil }
            state.finished = true
            let outcomes = state.outcomes.map { $0 ?? .cancelled }
            state.outcomes = []
            return (receiver, outcomes)
        }
        if let (receiver, outcomes) = deliver { receiver.deliver(outcomes) }
    }

    /// Hands over every outcome `.cancelled`, unless they were handed over already.
    func cancel() {
        let receiver = state.withLock { state -> Receiver? in
            state.finished = true
            state.outcomes = []
            return state.receiver.take()
        }
        receiver?.deliver(allCancelled)
    }
}
