import Synchronization

/// Many names resolved through one ``CachingResolver`` at once, each outcome handed to a sink as it
/// comes, with no task and no continuation per name (``CachingResolver/resolveMany(family:concurrency:sink:)``).
///
/// Each name goes through the resolver's cache as a lookup does: a fresh answer (positive, or a cached
/// NXDOMAIN or NODATA, RFC 2308 §5) reaches the sink at once; a miss joins the resolution already running
/// for the same name and family (single-flight) or starts one, whose answer is cached for its TTL; an
/// expired entry is served stale as ``ResolutionCache/policy`` says (RFC 8767). A miss asks the first
/// trusted upstream from its c-ares channel's own thread, and the sink runs there when the reply is read;
/// only a failover to the next upstream, serve-stale and a resolver other than a ``TrustedResolver`` take
/// a task.
///
/// At most ``concurrency`` names are being resolved at once; names submitted beyond that wait, in
/// submission order, for one to finish.
public final class BatchResolution: Sendable {
    /// Gets each name's outcome and the tag it was submitted with, once per submitted name, in the order
    /// the outcomes come (not the order of submission), on whichever thread ended the resolution: the
    /// submitter's for a cache hit, a c-ares channel's or the budget timer's for a miss, or a task's. It
    /// must not block. An outcome is what ``CachingResolver/resolveDetailed(_:family:)`` returns or throws,
    /// never `.cancelled` (nothing cancels a resolution of a batch; its budget ends it with `.timeout`).
    public typealias Sink = @Sendable (_ tag: Int, _ outcome: Result<ResolutionOutcome, ResolutionError>) -> Void

    /// The resolver whose cache, single-flight and upstreams every name goes through.
    public let resolver: CachingResolver
    /// A (`v4`), AAAA (`v6`) or both (`any`), for every name.
    public let family: AddressFamily
    /// The most names being resolved at once, at least 1.
    public let concurrency: Int
    private let sink: Sink

    private struct Job {
        let tag: Int
        let name: HostName
    }

    private struct State {
        var running = 0
        var waiting: [Job] = []
        /// Where the unstarted part of `waiting` begins.
        var head = 0
        var stopped = false

        /// The next waiting job, counted as running; `nil` (one fewer running) when none waits.
        mutating func next() -> Job? {
            guard !stopped, head < waiting.count else {
                running -= 1
                return nil
            }
            let job = waiting[head]
            head += 1
            if head == waiting.count {
                waiting.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64, head * 2 >= waiting.count {
                waiting.removeFirst(head)
                head = 0
            }
            return job
        }
    }

    private let state = Mutex(State())

    init(resolver: CachingResolver, family: AddressFamily, concurrency: Int, sink: @escaping Sink) {
        self.resolver = resolver
        self.family = family
        self.concurrency = max(1, concurrency)
        self.sink = sink
    }

    /// Starts resolving `name`, or queues it while ``concurrency`` names are being resolved; the sink gets
    /// its outcome with `tag`. Ignored after ``stop()``.
    public func submit(_ name: HostName, tag: Int) {
        let job = Job(tag: tag, name: name)
        let admitted = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            guard state.running < concurrency else {
                state.waiting.append(job)
                return false
            }
            state.running += 1
            return true
        }
        if admitted { run(job) }
    }

    /// Runs `action` once the thread that called the sink has handed over every outcome it has ready: on a
    /// c-ares channel's thread, at the end of its round (every reply one `poll(2)` wake-up found); on any
    /// other thread, at once. A sink that wakes a consumer defers the wake-up with it, so that a burst of
    /// replies costs the consumer one wake-up rather than one per name. `action` must not block.
    public static func afterDeliveries(_ action: @escaping @Sendable () -> Void) {
        AresRound.afterCurrent(action)
    }

    /// Starts nothing more: queued names are dropped (the sink never gets them), and so are later submits.
    /// The resolutions running go on, and the sink gets their outcomes.
    public func stop() {
        state.withLock { state in
            state.stopped = true
            state.waiting = []
            state.head = 0
        }
    }

    /// Resolves `job`, then each queued job its completion frees a place for. A completion that comes at
    /// once (a cache hit) continues this loop rather than nesting a call, so a long queue of hits never
    /// deepens the stack.
    private func run(_ job: Job) {
        var job = job
        while true {
            let handoff = Handoff()
            resolver.resolveDetailed(job.name, family: family) { [self, tag = job.tag] outcome in
                sink(tag, outcome)
                guard handoff.completedLater() else { return }
                if let next = state.withLock({ $0.next() }) { run(next) }
            }
            guard handoff.returned() else { return }
            guard let next = state.withLock({ $0.next() }) else { return }
            job = next
        }
    }
}

/// Which of a resolution's start and its completion happened last, so that exactly one of them takes the
/// next queued job: the start when the completion came at once, else the completion.
private final class Handoff: Sendable {
    private let state = Mutex<(started: Bool, completed: Bool)>((false, false))

    /// The start has returned; `true` when the completion came before.
    func returned() -> Bool {
        state.withLock { state in
            state.started = true
            return state.completed
        }
    }

    /// The completion has come; `true` when the start had returned already.
    func completedLater() -> Bool {
        state.withLock { state in
            state.completed = true
            return state.started
        }
    }
}
