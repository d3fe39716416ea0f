import Synchronization

/// The watch's shared state under one lock: the queue, the counts, the names reported, and the worker
/// waiting for an item.
final class WatchCore: Sendable {
    private struct State {
        var queue: WatchQueue
        var statistics = LocalResolverWatch.Statistics()
        /// The worker, suspended in ``next()`` on an empty queue.
        var waiter: CheckedContinuation<WatchQueue.Item?, Never>?
        var stopped = false
        var reported: Set<HostName> = []
        /// ``reported`` in the order reported, for forgetting the oldest.
        var reportOrder: [HostName] = []
    }

    private let state: Mutex<State>

    init(_ queue: WatchQueue) {
        state = Mutex(State(queue: queue))
    }

    var statistics: LocalResolverWatch.Statistics { state.withLock { $0.statistics } }

    func notCompared() -> LocalResolverWatch.Decision {
        state.withLock { $0.statistics.notCompared += 1 }
        return .notCompared
    }

    /// Judges and counts `item`; a queued item goes straight to a waiting worker.
    func offer(_ item: WatchQueue.Item, now: UInt64) -> LocalResolverWatch.Decision {
        let (decision, handOver) = state.withLock { state -> (LocalResolverWatch.Decision, (CheckedContinuation<WatchQueue.Item?, Never>, WatchQueue.Item)?) in
            guard !state.stopped else {
                state.statistics.notCompared += 1
                return (.notCompared, nil)
            }
            let decision = state.queue.offer(item, now: now)
            switch decision {
            case .queued: state.statistics.queued += 1
            case .recentlyCompared: state.statistics.recentlyCompared += 1
            case .rateLimited: state.statistics.rateLimited += 1
            case .queueFull: state.statistics.dropped += 1
            case .notCompared: state.statistics.notCompared += 1
            }
            guard decision == .queued, let waiter = state.waiter.take(), let next = state.queue.next() else {
                return (decision, nil)
            }
            return (decision, (waiter, next))
        }
        // Resumed outside the lock; whoever takes the waiter under the lock resumes it, exactly once.
        if let (waiter, next) = handOver { waiter.resume(returning: next) }
        return decision
    }

    /// The next item, waiting for one while the queue is empty; `nil` once stopped.
    func next() async -> WatchQueue.Item? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> WatchQueue.Item?? in
                    if state.stopped { return .some(nil) }
                    if let item = state.queue.next() { return .some(item) }
                    state.waiter = continuation
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            stop()
        }
    }

    /// Counts `verdict` for `item`; returns the report when it is the first hijacked verdict for the name.
    func record(_ verdict: HijackVerdict, of item: WatchQueue.Item, local: [IPAddress]) -> HijackReport? {
        state.withLock { state -> HijackReport? in
            switch verdict {
            case .consistent:
                state.statistics.consistent += 1
                return nil
            case .inconclusive:
                state.statistics.inconclusive += 1
                return nil
            case .hijacked(let reasons):
                state.statistics.hijacked += 1
                guard state.reported.insert(item.name).inserted else { return nil }
                state.statistics.hijackedNames += 1
                state.reportOrder.append(item.name)
                if state.reportOrder.count > LocalResolverWatch.maximumReportedNames {
                    state.reported.remove(state.reportOrder.removeFirst())
                }
                return HijackReport(name: item.name, family: item.family, trusted: item.trusted, local: local, reasons: reasons)
            }
        }
    }

    /// Stops: the queue is emptied and a waiting worker gets `nil`.
    func stop() {
        let waiter = state.withLock { state in
            state.stopped = true
            state.queue.removeAll()
            return state.waiter.take()
        }
        waiter?.resume(returning: nil)
    }
}
