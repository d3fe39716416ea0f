import CEpoll
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One thread running `epoll_wait` for every socket of the process, and the timers of their waits.
///
/// Sockets are registered once, edge-triggered (`EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET`), with a
/// token (never an object pointer) in `epoll_data`: the loop looks the token up in its registry, so an
/// event for a socket closed by another thread while the event sat in the current batch finds nothing
/// and is dropped. The registry holds its handlers weakly, so registration keeps nothing alive.
///
/// Timers: a min-heap of (deadline, token, direction); the earliest deadline is `epoll_wait`'s timeout,
/// and a new deadline earlier than the one the loop sleeps until wakes it through an eventfd. Handlers
/// keep at most one live entry per direction (see ``SocketChannel``), and the entries of closed
/// registrations are dropped when they outnumber the live ones, so the heap stays bounded.
///
/// The loop thread waits in `epoll_wait` and runs handlers, which record readiness and resume
/// continuations. It is also a `TaskExecutor`: a task started with the loop as its executor preference
/// (`Task(executorPreference: loop)`, as the proxy's connections are) runs its jobs on the loop thread,
/// between `epoll_wait` calls, so a continuation resumed by a handler continues on the same thread
/// without a hop to Swift's pool and back (the lesson of event-driven servers: the loop owns its
/// connections). Jobs must not block; those enqueued from other threads wake the loop through the eventfd.
/// Tasks without that preference are resumed on Swift's pool as usual.
///
/// Why a loop of our own (not Dispatch sources): a Dispatch source must be resumed and suspended around
/// each wait, and a wakeup that arrives while it is suspended is lost; edge-triggered epoll with a
/// per-direction `ready` flag cannot lose one (see ``SocketChannel``), and one thread serves any number
/// of sockets, so threads do not grow with load.
package final class EventLoop: TaskExecutor, Sendable {
    /// The process's loop, started on first use.
    package static let shared = EventLoop()

    private struct Registration {
        weak var handler: (any EventLoopHandler)?
    }

    private enum Sleep {
        /// Running handlers or timers: the loop reads the heap again before it sleeps.
        case awake
        /// In (or about to enter) `epoll_wait`, until this deadline (`nil`: until an event).
        case asleep(until: ContinuousClock.Instant?)
    }

    private struct State {
        var handlers: [UInt64: Registration] = [:]
        var nextToken: UInt64 = 1  // 0 is the wake-up eventfd
        var timers = TimerHeap()
        var sleep = Sleep.awake
        /// Jobs of tasks that prefer this loop as their executor, in the order they were enqueued.
        var jobs: [UnownedJob] = []
    }

    private let epoll: Int32
    private let wakeup: Int32
    private static let wakeToken: UInt64 = 0
    /// Guards the registry, the timer heap, the job queue and what the loop thread is doing (awake or
    /// asleep until when).
    private let state = Mutex(State())

    private init() {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeup = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
        // Without an epoll instance no socket can ever be waited on; this happens only when the process
        // has no descriptor left at its first socket.
        precondition(epoll >= 0 && wakeup >= 0, "HostPinNet: cannot create the event loop (errno \(errno))")
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | EPOLLET.rawValue
        event.data.u64 = Self.wakeToken
        _ = epoll_ctl(epoll, EPOLL_CTL_ADD, wakeup, &event)
        let thread = Thread { [self] in run() }
        thread.name = "hostpin.event-loop"
        thread.start()
    }

    /// A token for a registration about to be made with ``add(_:token:handler:)``.
    package func newToken() -> UInt64 {
        state.withLock { state in
            defer { state.nextToken += 1 }
            return state.nextToken
        }
    }

    /// Registers `descriptor` for read and write edges, reported to `handler` (held weakly).
    ///
    /// - Throws: ``SocketError/system(call:errno:)`` from `epoll_ctl`.
    package func add(_ descriptor: Int32, token: UInt64, handler: any EventLoopHandler) throws(SocketError) {
        // In the registry first: the kernel reports an edge for a socket already ready at once.
        register(token, handler: handler)
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | EPOLLOUT.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue
        event.data.u64 = token
        guard epoll_ctl(epoll, EPOLL_CTL_ADD, descriptor, &event) == 0 else {
            let failure = errno
            deregister(token)
            throw .system(call: "epoll_ctl", errno: failure)
        }
    }

    /// Deregisters `descriptor` (call before closing it); its pending events and timers are dropped.
    package func remove(_ descriptor: Int32, token: UInt64) {
        _ = epoll_ctl(epoll, EPOLL_CTL_DEL, descriptor, nil)
        deregister(token)
    }

    /// Registers a handler without a descriptor: it receives only its timers.
    func register(_ token: UInt64, handler: any EventLoopHandler) {
        state.withLock { $0.handlers[token] = Registration(handler: handler) }
    }

    /// Forgets `token`: its pending events and timers are dropped.
    func deregister(_ token: UInt64) {
        _ = state.withLock { $0.handlers.removeValue(forKey: token) }
    }

    /// Calls the handler of `token` back at `deadline` (``EventLoopHandler/timerFired(_:deadline:now:)``).
    package func schedule(_ token: UInt64, _ direction: IODirection, at deadline: ContinuousClock.Instant) {
        let wake = state.withLock { state -> Bool in
            state.timers.push(TimerHeap.Entry(deadline: deadline, token: token, direction: direction))
            guard case .asleep(let until) = state.sleep, until.map({ deadline < $0 }) ?? true else { return false }
            state.sleep = .asleep(until: deadline)  // one eventfd write per earlier deadline
            return true
        }
        if wake { wakeUp() }
    }

    /// Queues a job of a task that prefers this loop as its executor; it runs on the loop thread.
    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let wake = state.withLock { state -> Bool in
            state.jobs.append(job)
            guard case .asleep = state.sleep else { return false }
            state.sleep = .awake  // one eventfd write until the loop goes to sleep again
            return true
        }
        if wake { wakeUp() }
    }

    private func wakeUp() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeup, &one, MemoryLayout<UInt64>.size)
    }

    private func run() {
        let capacity = 256
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: capacity)
        while true {
            fireTimers()
            runJobs()
            let timeout = prepareToSleep()
            let count = epoll_wait(epoll, events, Int32(capacity), timeout)
            let failure = errno
            let tokens = count > 0 ? (0..<Int(count)).map { (events[$0].data.u64, events[$0].events) } : []
            let handlers = state.withLock { state -> [(any EventLoopHandler)?] in
                state.sleep = .awake
                return tokens.map { state.handlers[$0.0]?.handler }
            }
            if count < 0 {
                // EINTR: a signal; anything else would be a bug in the arguments above.
                if failure != EINTR { usleep(1000) }
                continue
            }
            for (index, (token, mask)) in tokens.enumerated() {
                if token == Self.wakeToken {
                    var value: UInt64 = 0
                    _ = Glibc.read(wakeup, &value, MemoryLayout<UInt64>.size)
                } else {
                    handlers[index]?.handle(events: mask)
                }
            }
        }
    }

    /// Runs the jobs queued so far; jobs they queue run on the next turn, after the loop has polled
    /// epoll again (without sleeping), so a busy task cannot starve the sockets.
    private func runJobs() {
        let jobs = state.withLock { state -> [UnownedJob] in
            defer { state.jobs = [] }
            return state.jobs
        }
        let executor = asUnownedTaskExecutor()
        for job in jobs { job.runSynchronously(on: executor) }
    }

    /// Runs every timer that is due; a handler's later deadline is scheduled again.
    private func fireTimers() {
        let now = ContinuousClock.now
        let due = state.withLock { state in
            state.timers.popDue(now).map { entry in (entry, state.handlers[entry.token]?.handler) }
        }
        for (entry, handler) in due {
            guard let handler, let again = handler.timerFired(entry.direction, deadline: entry.deadline, now: now) else { continue }
            schedule(entry.token, entry.direction, at: again)
        }
    }

    /// Marks the loop asleep until its earliest timer and returns `epoll_wait`'s timeout in milliseconds
    /// (rounded up, so a timer never fires early; -1 for none; 0, staying awake, while jobs are queued).
    private func prepareToSleep() -> Int32 {
        state.withLock { state in
            if !state.jobs.isEmpty { return 0 }
            // Timers of closed registrations linger until their deadline; drop them once they dominate.
            if state.timers.count > 1024, state.timers.count > 4 * state.handlers.count {
                let handlers = state.handlers
                state.timers.retain { handlers[$0.token] != nil }
            }
            let next = state.timers.earliest
            state.sleep = .asleep(until: next)
            guard let next else { return -1 }
            let (seconds, attoseconds) = (next - ContinuousClock.now).components
            guard seconds >= 0, attoseconds >= 0 else { return 0 }
            let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
            return Int32(min(milliseconds, Int64(Int32.max)))
        }
    }
}
