import Synchronization

/// One upstream exchange shared by every caller that missed a cache for the same key while it ran
/// (single-flight): a resolution of one name and family (``CachingResolver``), or a question the DNS stub
/// forwards. Each waiter is resumed exactly once: with the shared result, or with `.cancelled` when its
/// own task is cancelled; the exchange goes on for the others.
package final class Flight<Value: Sendable>: Sendable {
    /// Unchecked continuations: each is taken out of ``State`` under the lock before it is resumed, so
    /// none is resumed twice (a checked one costs an allocation per miss, on the path of every cold name).
    private typealias Waiter = UnsafeContinuation<Result<Value, ResolutionError>, Never>

    private struct State {
        /// The first waiter, kept apart: most flights have only their leader, and a dictionary allocates.
        var first: (id: Int, waiter: Waiter)?
        var others: [Int: Waiter] = [:]
        /// Waiters without a task (``whenFinished(_:)``); never cancelled.
        var callbacks: [@Sendable (Result<Value, ResolutionError>) -> Void] = []
        var nextWaiter = 0
        var result: Result<Value, ResolutionError>?

        mutating func remove(_ id: Int) -> Waiter? {
            if let first, first.id == id {
                self.first = nil
                return first.waiter
            }
            return others.removeValue(forKey: id)
        }
    }

    private let state = Mutex(State())

    package init() {}

    /// Waits for the shared result.
    package func wait() async throws(ResolutionError) -> Value {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        let result = await withTaskCancellationHandler {
            await withUnsafeContinuation { (waiter: Waiter) in
                let ready = state.withLock { state -> Result<Value, ResolutionError>? in
                    if let result = state.result { return result }
                    // Cancelled before this point: `onCancel` found no waiter to resume.
                    if Task.isCancelled { return .failure(.cancelled) }
                    if state.first == nil { state.first = (id, waiter) } else { state.others[id] = waiter }
                    return nil
                }
                if let ready { waiter.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.remove(id) }
            waiter?.resume(returning: .failure(.cancelled))
        }
        return try result.get()
    }

    /// Calls `body` with the shared result once there is one: at once when the flight has finished, else
    /// on the thread that finishes it. For a caller that waits without a task; `body` must not block.
    package func whenFinished(_ body: @escaping @Sendable (Result<Value, ResolutionError>) -> Void) {
        let ready = state.withLock { state -> Result<Value, ResolutionError>? in
            if let result = state.result { return result }
            state.callbacks.append(body)
            return nil
        }
        if let ready { body(ready) }
    }

    /// Records the result and resumes every waiter with it.
    package func finish(_ result: Result<Value, ResolutionError>) {
        let (first, others, callbacks) = state.withLock { state -> (Waiter?, [Waiter], [@Sendable (Result<Value, ResolutionError>) -> Void]) in
            state.result = result
            defer {
                state.first = nil
                state.others = [:]
                state.callbacks = []
            }
            return (state.first?.waiter, state.others.isEmpty ? [] : Array(state.others.values), state.callbacks)
        }
        first?.resume(returning: result)
        for waiter in others { waiter.resume(returning: result) }
        for callback in callbacks { callback(result) }
    }
}
