import Synchronization

/// One upstream resolution shared by every caller that missed the cache for the same name and family
/// while it ran (single-flight). Each waiter is resumed exactly once: with the shared result, or with
/// `.cancelled` when its own task is cancelled; the resolution goes on for the others.
final class Flight: Sendable {
    private struct State {
        var waiters: [Int: CheckedContinuation<Result<Resolution, ResolutionError>, Never>] = [:]
        var nextWaiter = 0
        var result: Result<Resolution, ResolutionError>?
    }

    private let state = Mutex(State())

    /// Waits for the shared result.
    func wait() async throws(ResolutionError) -> Resolution {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Result<Resolution, ResolutionError>? in
                    if let result = state.result { return result }
                    state.waiters[id] = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(returning: .failure(.cancelled))
        }
        return try result.get()
    }

    /// Records the result and resumes every waiter with it.
    func finish(_ result: Result<Resolution, ResolutionError>) {
        let waiters = state.withLock { state in
            state.result = result
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: result) }
    }
}
