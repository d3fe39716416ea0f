import Foundation

/// A thread of its own that runs short actions at monotonic deadlines: the shared cache's patience (how
/// long a miss waits for the store before asking the upstreams too). Not a `Task.sleep` (it would hold
/// one of the cooperative pool's two threads' time for every miss) nor a Dispatch timer (the global
/// queues are the pool).
///
/// Actions run on the timer's thread, in deadline order, and must not block.
final class DeadlineTimer: @unchecked Sendable {
    // @unchecked: `pending` is read and written only while `condition` is locked.
    private let condition = NSCondition()
    private var pending: [(deadline: UInt64, action: @Sendable () -> Void)] = []

    /// Starts the thread, named `name`; it lives as long as the process (one per shared cache).
    init(name: String) {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    /// Runs `action` once `delay` has passed.
    func after(_ delay: Duration, _ action: @escaping @Sendable () -> Void) {
        let nanoseconds = UInt64(max(0, delay.components.seconds)) * 1_000_000_000
            + UInt64(max(0, delay.components.attoseconds / 1_000_000_000))
        let deadline = Self.now() + nanoseconds
        condition.lock()
        // Deadlines mostly arrive in order (one patience for every miss): insert from the end.
        var index = pending.count
        while index > 0, pending[index - 1].deadline > deadline { index -= 1 }
        pending.insert((deadline, action), at: index)
        if index == 0 { condition.signal() }
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            var due: [@Sendable () -> Void] = []
            while due.isEmpty {
                let now = Self.now()
                while let first = pending.first, first.deadline <= now {
                    due.append(first.action)
                    pending.removeFirst()
                }
                guard due.isEmpty else { break }
                if let first = pending.first {
                    _ = condition.wait(until: Date(timeIntervalSinceNow: Double(first.deadline - now) / 1e9))
                } else {
                    condition.wait()
                }
            }
            condition.unlock()
            for action in due { action() }
        }
    }

    /// `CLOCK_MONOTONIC`, fine-grained (the cache's coarse clock moves in 4 ms steps; the patience is 20 ms).
    private static func now() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
