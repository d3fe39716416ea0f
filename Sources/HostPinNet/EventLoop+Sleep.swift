import Synchronization

extension EventLoop {
    /// Suspends the calling task until `deadline` or until it is cancelled, on the loop's own timers.
    ///
    /// For back-offs while the process is out of file descriptors: `Task.sleep` may make libdispatch
    /// create a timer descriptor on first use, and libdispatch aborts the process when it cannot.
    package func sleep(until deadline: ContinuousClock.Instant) async {
        let sleeper = Sleeper()
        let token = newToken()
        register(token, handler: sleeper)
        defer { deregister(token) }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                if sleeper.wait(continuation) { schedule(token, .read, at: deadline) }
            }
        } onCancel: {
            sleeper.wake()
        }
    }
}

/// A task sleeping on the loop's timers: a registration without a descriptor.
private final class Sleeper: EventLoopHandler {
    private enum State {
        case idle
        case waiting(CheckedContinuation<Void, Never>)
        case woken
    }

    /// Guards the sleeping task's continuation, resumed once by the timer or by cancellation.
    private let state = Mutex(State.idle)

    /// Stores the continuation; `false` (and resumed at once) when already woken by cancellation.
    func wait(_ continuation: CheckedContinuation<Void, Never>) -> Bool {
        let stored = state.withLock { state -> Bool in
            guard case .idle = state else { return false }
            state = .waiting(continuation)
            return true
        }
        if !stored { continuation.resume() }
        return stored
    }

    func wake() {
        let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state = .woken }
            if case .waiting(let continuation) = state { return continuation }
            return nil
        }
        continuation?.resume()
    }

    func handle(events _: UInt32) {}

    func timerFired(_: IODirection, deadline _: ContinuousClock.Instant, now _: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        wake()
        return nil
    }
}
