import Synchronization

/// The reply to one exchange: the reply message's bytes, or why there is none.
public typealias EncryptedExchangeResult = Result<[UInt8], EncryptedTransportFailure>

/// The exchanges between callers and one transport's owner thread: what callers submitted or cancelled
/// since the thread last looked, and the continuation of each exchange still waiting.
///
/// Each continuation is resumed exactly once, by whoever takes it out of the book first: the thread
/// (``finish(_:)``, with the reply), a cancellation (``exchange(_:)``'s handler), or shut-down. Decisions
/// are made under the lock; continuations are resumed after it.
final class ExchangeBook<Job: Sendable>: Sendable {
    typealias Continuation = CheckedContinuation<EncryptedExchangeResult, Never>

    /// What the owner thread has to do.
    struct Work {
        var submitted: [(id: UInt64, job: Job)] = []
        var cancelled: [UInt64] = []
        var stopping = false
        /// Close the kept connections (``ExchangeBook/closeConnections()``).
        var closingConnections = false
    }

    private struct State {
        var nextID: UInt64 = 1
        var waiting: [UInt64: Continuation] = [:]
        var work = Work()
        /// Set by ``close()``: nothing is accepted, and ``wake`` is never called again, so the thread may
        /// free what `wake` touches.
        var closed = false
    }

    private let state = Mutex(State())
    /// Wakes the owner thread (a pipe write, `curl_multi_wakeup`). Called under the lock, and only
    /// before ``close()``, so it never touches what the thread frees afterwards.
    private let wake: @Sendable () -> Void

    init(wake: @escaping @Sendable () -> Void) {
        self.wake = wake
    }

    /// Hands `job` to the owner thread and waits for its reply; returns `.cancelled` at once when the
    /// calling task is cancelled (before or after submitting), telling the thread to drop the job.
    func exchange(_ job: Job) async -> EncryptedExchangeResult {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: Continuation) in
                let refusal: EncryptedTransportFailure? = state.withLock { state in
                    if state.closed { return .transportClosed }
                    // The cancellation handler ran first (it found nothing to cancel): never submit.
                    if Task.isCancelled { return .cancelled }
                    state.waiting[id] = continuation
                    state.work.submitted.append((id, job))
                    wake()
                    return nil
                }
                if let refusal { continuation.resume(returning: .failure(refusal)) }
            }
        } onCancel: {
            let continuation = state.withLock { state -> Continuation? in
                guard let continuation = state.waiting.removeValue(forKey: id) else { return nil }
                state.work.cancelled.append(id)
                wake()
                return continuation
            }
            continuation?.resume(returning: .failure(.cancelled))
        }
    }

    /// The owner thread takes what happened since it last looked.
    func takeWork() -> Work {
        state.withLock { state in
            defer {
                state.work.submitted.removeAll(keepingCapacity: true)
                state.work.cancelled.removeAll(keepingCapacity: true)
                state.work.closingConnections = false
            }
            return state.work
        }
    }

    /// The owner thread delivers `result` for exchange `id`; a no-op when the exchange was cancelled.
    func finish(_ id: UInt64, with result: EncryptedExchangeResult) {
        let continuation = state.withLock { $0.waiting.removeValue(forKey: id) }
        continuation?.resume(returning: result)
    }

    /// Asks the owner thread to close its kept connections (a network change).
    func closeConnections() {
        state.withLock { state in
            guard !state.closed else { return }
            state.work.closingConnections = true
            wake()
        }
    }

    /// Runs `body` under the lock ``wake`` is called under: the owner thread swaps what `wake` touches
    /// there (a new multi handle), so that no wake-up reaches the old one after it.
    func whileWakeIsHeld(_ body: () -> Void) {
        state.withLock { _ in body() }
    }

    /// Asks the owner thread to stop (the transport is gone).
    func stop() {
        state.withLock { state in
            guard !state.closed else { return }
            state.work.stopping = true
            wake()
        }
    }

    /// The owner thread, stopping: fails every waiting exchange with `.transportClosed` and refuses new
    /// ones; afterwards ``wake`` is never called again.
    func close() {
        let waiting = state.withLock { state in
            state.closed = true
            defer { state.waiting.removeAll() }
            return Array(state.waiting.values)
        }
        for continuation in waiting { continuation.resume(returning: .failure(.transportClosed)) }
    }
}
