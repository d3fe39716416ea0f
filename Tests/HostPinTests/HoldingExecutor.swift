import Dispatch
import Synchronization

/// A task executor that stands in for a cooperative pool kept busy by other work: it runs the first job
/// it gets at once (a task's start, up to its first suspension), then holds every later one for `hold`
/// before running it. Jobs run one at a time on a serial Dispatch queue of its own, so holding them blocks
/// no thread of the real pool and no other test.
final class HoldingExecutor: TaskExecutor {
    private struct State {
        var started = false
        var open = false
        var held: [UnownedJob] = []
    }

    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "hostpin-test-holding-executor")
    private let hold: Duration

    init(holding hold: Duration) {
        self.hold = hold
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let (runNow, startHold) = state.withLock { state -> (Bool, Bool) in
            if state.open || !state.started {
                state.started = true
                return (true, false)
            }
            state.held.append(job)
            return (false, state.held.count == 1)
        }
        if runNow { return run(job) }
        if startHold {
            let nanoseconds = Int(hold.components.seconds) * 1_000_000_000 + Int(hold.components.attoseconds / 1_000_000_000)
            queue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [self] in
                let held = state.withLock { state -> [UnownedJob] in
                    state.open = true
                    defer { state.held = [] }
                    return state.held
                }
                for job in held { run(job) }
            }
        }
    }

    private func run(_ job: UnownedJob) {
        queue.async { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
    }
}
