import Dispatch
import Synchronization

/// An exchange a resolution waits for, which its deadline ends early: every outcome `.cancelled`, at once.
protocol InterruptibleExchange: Sendable {
    func cancel()
}

/// The budget of one resolution (``TrustedResolver/Configuration/budget``), run out by a
/// ``BudgetTimer``.
///
/// The resolution registers each exchange it sends (``admit(_:)``; A and AAAA go in one); when the
/// budget runs out first, ``expire()`` records the upstream still being asked as timed out (as a failure
/// in ``UpstreamHealth``), keeps the `.timeout` error with the failures so far, and ends the exchanges
/// being waited for at once, so even a black-hole upstream gives the caller its answer on time.
/// ``complete(_:)`` then hands the caller whichever came first.
final class ResolutionDeadline: Sendable {
    private enum State {
        /// The resolution is running; `sent` holds every exchange it admitted (finished ones ignore a
        /// second finish). A few per upstream asked, so no pruning.
        case running(sent: [any InterruptibleExchange])
        /// The resolution ended first.
        case completed
        /// The budget ran out first: the error to throw.
        case expired(ResolutionError)
        /// The caller went away first (its task was cancelled).
        case cancelled
    }

    private let state = Mutex(State.running(sent: []))
    /// The upstream failures so far and the upstream being asked.
    let attempts: Attempts
    private let budget: Duration
    private let health: UpstreamHealth
    /// When the budget runs out (the ``BudgetTimer`` fires then too).
    private let expiresAt: ContinuousClock.Instant

    /// A budget running from `start` (now by default): a resolution of a batch that had started without a
    /// deadline (``TrustedResolver/laneFailed(_:lane:name:family:completion:)``) keeps the budget it began with.
    init(attempts: Attempts, budget: Duration, health: UpstreamHealth, start: ContinuousClock.Instant = .now) {
        self.attempts = attempts
        self.budget = budget
        self.health = health
        expiresAt = start + budget
    }

    /// What is left of the budget: an exchange's timeout may not be longer. Zero or less once it has run
    /// out.
    var remaining: Duration { expiresAt - .now }

    /// Whether the resolution has ended, either way (the timer drops it then).
    var isSettled: Bool {
        state.withLock { state in
            if case .running = state { return false }
            return true
        }
    }

    /// Whether the budget ran out before the resolution ended.
    var hasExpired: Bool {
        state.withLock { state in
            if case .expired = state { return true }
            return false
        }
    }

    /// `exchange` is about to be sent and waited for; `false` when the budget has run out already (do
    /// not send it).
    func admit(_ exchange: any InterruptibleExchange) -> Bool {
        state.withLock { state in
            guard case .running(var sent) = state else { return false }
            sent.append(exchange)
            state = .running(sent: sent)
            return true
        }
    }

    /// The budget has run out: unless the resolution has ended, it ends now with `.timeout`.
    func expire() {
        let interrupted = state.withLock { state -> [any InterruptibleExchange] in
            guard case .running(let sent) = state else { return [] }
            let (failures, timedOut) = attempts.atDeadline()
            if let timedOut { health.recordFailure(timedOut, .acrossNames) }
            state = .expired(.timeout(budget: budget, failures))
            return sent
        }
        for exchange in interrupted { exchange.cancel() }
    }

    /// The caller went away: unless the resolution has ended, it ends now with `.cancelled`, its exchanges
    /// at once, and no upstream is blamed.
    func cancel() {
        let interrupted = state.withLock { state -> [any InterruptibleExchange] in
            guard case .running(let sent) = state else { return [] }
            state = .cancelled
            return sent
        }
        for exchange in interrupted { exchange.cancel() }
    }

    /// The resolution ended with `result`: returns it, or the `.timeout` failure when the budget ran out
    /// first.
    func complete<Answer: Sendable>(_ result: Result<Answer, ResolutionError>) -> Result<Answer, ResolutionError> {
        state.withLock { state in
            if case .expired(let error) = state { return .failure(error) }
            if case .cancelled = state { return .failure(.cancelled) }
            state = .completed
            return result
        }
    }
}

/// Runs out the budgets of a resolver's resolutions: one Dispatch timer per resolver rather than a
/// sleeping task per resolution.
///
/// Every resolution of a resolver has the same budget, so deadlines arrive in the order resolutions start
/// and a FIFO queue holds them sorted. The timer is armed for the first deadline not yet settled; when it
/// fires, every deadline that is due is expired and settled ones at the front are dropped. A resolution
/// that ends early is only marked settled (``ResolutionDeadline/complete(_:)``), never searched for.
final class BudgetTimer: Sendable {
    private struct Entry {
        let due: DispatchTime
        let deadline: ResolutionDeadline
    }

    private struct State {
        var queue: [Entry] = []
        /// The index of the first live entry in `queue`.
        var head = 0
        /// When the timer is set to fire, if it is.
        var armedFor: DispatchTime?
        /// Used only under the lock.
        let timer: any DispatchSourceTimer
    }

    private let budget: DispatchTimeInterval?
    private let state: Mutex<State>
    private static let queue = DispatchQueue(label: "hostpin-budget")

    init(budget: Duration) {
        self.budget = Self.interval(budget)
        state = Mutex(State(timer: DispatchSource.makeTimerSource(queue: Self.queue)))
        state.withLock { state in
            state.timer.setEventHandler { [weak self] in self?.fire() }
            state.timer.resume()
        }
    }

    deinit {
        state.withLock { $0.timer.cancel() }
    }

    /// Starts the budget of a resolution starting now.
    func start(_ deadline: ResolutionDeadline) {
        let due = budget.map { DispatchTime.now() + $0 } ?? .distantFuture
        state.withLock { state in
            state.queue.append(Entry(due: due, deadline: deadline))
            if state.armedFor == nil { arm(&state, for: due) }
        }
    }

    private func fire() {
        var expiring: [ResolutionDeadline] = []
        state.withLock { state in
            state.armedFor = nil
            let now = DispatchTime.now()
            while state.head < state.queue.count {
                let entry = state.queue[state.head]
                if entry.due <= now {
                    expiring.append(entry.deadline)
                } else if !entry.deadline.isSettled {
                    break
                }
                state.head += 1
            }
            if state.head == state.queue.count {
                state.queue.removeAll(keepingCapacity: state.queue.count <= 4096)
                state.head = 0
            } else if state.head >= 1024, state.head * 2 >= state.queue.count {
                state.queue.removeFirst(state.head)
                state.head = 0
            }
            if state.head < state.queue.count { arm(&state, for: state.queue[state.head].due) }
        }
        for deadline in expiring { deadline.expire() }
    }

    private func arm(_ state: inout State, for due: DispatchTime) {
        state.armedFor = due
        state.timer.schedule(deadline: due, repeating: .never, leeway: .milliseconds(1))
    }

    /// `duration` as a Dispatch interval in nanoseconds; `nil` (never) when it does not fit.
    private static func interval(_ duration: Duration) -> DispatchTimeInterval? {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return .nanoseconds(0) }
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (total, overflowed) = whole.addingReportingOverflow(max(0, attoseconds) / 1_000_000_000)
        return overflow || overflowed || total > Int64(Int.max / 2) ? nil : .nanoseconds(Int(total))
    }
}
