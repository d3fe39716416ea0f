import HostPin
import Synchronization

/// The names `hostpin lookup` has admitted to its window and not yet handed to a worker, and the
/// workers waiting for one.
///
/// `--batch` keeps `--concurrency` long-lived worker tasks that each resolve name after name, rather than a
/// child task per name: a task costs an allocation of its own and of its first frames each time, which was
/// a tenth of the CPU time of a cold batch (docs/ARCHITECTURE.md, "Bulk lookups"). Each continuation is
/// taken out of the state under the lock before it is resumed, so none is resumed twice.
final class LookupWorkQueue: Sendable {
    /// One admitted name: its place in the input and the name.
    struct Job: Sendable {
        let index: Int
        let name: HostName
    }

    private struct State {
        var jobs: [Job] = []
        /// Where the untaken part of `jobs` starts.
        var head = 0
        var waiting: [UnsafeContinuation<Job?, Never>] = []
        var closed = false

        /// The next queued job, if any. The taken ones are dropped once they are half the array (or all of
        /// it): the window keeps at most `--concurrency` queued, so the array stays that small however long
        /// the batch (without this, a queue never quite empty kept every job of an endless batch).
        mutating func take() -> Job? {
            guard head < jobs.count else { return nil }
            let job = jobs[head]
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64, head * 2 >= jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            return job
        }
    }

    private let state = Mutex(State())

    /// Hands `job` to a waiting worker, or keeps it for the next one that asks. Ignored once closed.
    func push(_ job: Job) {
        let worker = state.withLock { state -> UnsafeContinuation<Job?, Never>? in
            guard !state.closed else { return nil }
            if !state.waiting.isEmpty { return state.waiting.removeLast() }
            state.jobs.append(job)
            return nil
        }
        worker?.resume(returning: job)
    }

    /// The next job, waiting for one when none is queued; `nil` once ``close()`` was called.
    func next() async -> Job? {
        if let ready = state.withLock({ state -> Job?? in
            if let job = state.take() { return job }
            return state.closed ? .some(nil) : nil
        }) {
            return ready
        }
        return await withUnsafeContinuation { continuation in
            let ready = state.withLock { state -> Job?? in
                if let job = state.take() { return job }
                if state.closed { return .some(nil) }
                state.waiting.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Ends every worker's wait, now and later, with `nil`; returns the jobs no worker had taken, which
    /// are dropped.
    @discardableResult
    func close() -> [Job] {
        let (workers, dropped) = state.withLock { state -> ([UnsafeContinuation<Job?, Never>], [Job]) in
            state.closed = true
            defer {
                state.jobs = []
                state.head = 0
                state.waiting = []
            }
            return (state.waiting, Array(state.jobs[state.head...]))
        }
        for worker in workers { worker.resume(returning: nil) }
        return dropped
    }
}
