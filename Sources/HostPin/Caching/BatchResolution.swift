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
///
/// In front of a ``TrustedResolver`` without a shared cache, DNSSEC off and one record type per name
/// (``TrustedResolver/takesBlocks(family:)``), a miss the batch leads is not asked on its own: its query
/// joins a block that goes to the first upstream's c-ares thread in one hand-over (``AresQueryBlock``),
/// and its answer is read, cached and handed to the sink there, with no deadline, attempts record or
/// closure chain per name (docs/ARCHITECTURE.md, "Bulk lookups"). Its flight is in the resolver's table
/// all the same, so a task that misses the same name meanwhile joins it; a name already being resolved
/// is joined as before. A failure goes on to the next upstreams exactly as a lookup's would.
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

    /// A miss the batch leads, waiting for its block.
    private struct LaneQuery: Sendable {
        let tag: Int
        let key: ResolutionCache.Key
        let flight: Flight<ResolutionOutcome>
        let message: [UInt8]
    }

    /// The trusted resolver a batch sends blocks through, `nil` when it resolves each name on its own.
    private let laneResolver: TrustedResolver?

    private struct State {
        var running = 0
        var waiting: [Job] = []
        /// Where the unstarted part of `waiting` begins.
        var head = 0
        var stopped = false
        /// Misses waiting for the next block, and whether its hand-over is put off to the end of the
        /// current c-ares round.
        var lane: [LaneQuery] = []
        var flushDeferred = false

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
        if resolver.shared == nil, let trusted = resolver.upstream as? TrustedResolver, trusted.takesBlocks(family: family) {
            laneResolver = trusted
        } else {
            laneResolver = nil
        }
    }

    /// Starts resolving `name`, or queues it while ``concurrency`` names are being resolved; the sink gets
    /// its outcome with `tag`. Ignored after ``stop()``.
    public func submit(_ name: HostName, tag: Int) {
        let job = Job(tag: tag, name: name)
        guard admit(job) else { return }
        guard laneResolver != nil else { return run(job) }
        drive(job)
        flush()
    }

    /// Counts `job` as running and returns true, or queues it while ``concurrency`` names run (false);
    /// false after ``stop()``.
    private func admit(_ job: Job) -> Bool {
        state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            guard state.running < concurrency else {
                state.waiting.append(job)
                return false
            }
            state.running += 1
            return true
        }
    }

    /// Submits each of `jobs` (a name and its tag) as ``submit(_:tag:)`` does, the misses among those
    /// started at once handed to the upstream's c-ares thread as one block.
    public func submit(contentsOf jobs: [(name: HostName, tag: Int)]) {
        guard laneResolver != nil else {
            for job in jobs { submit(job.name, tag: job.tag) }
            return
        }
        for job in jobs {
            let job = Job(tag: job.tag, name: job.name)
            if admit(job) { drive(job) }
        }
        flush()
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

extension BatchResolution {
    /// Starts `job`, then each queued job a completion at once frees a place for, through the lane: a
    /// miss this batch leads waits in ``State/lane`` for ``flush()``.
    private func drive(_ job: Job) {
        var job = job
        while start(job) {
            guard let next = state.withLock({ $0.next() }) else { return }
            job = next
        }
    }

    /// One name as ``CachingResolver/resolveDetailed(_:family:countingLookup:completion:)`` takes it, up to
    /// where it would ask the upstream; `true` when its outcome has reached the sink already.
    private func start(_ job: Job) -> Bool {
        let name = job.name
        guard let trusted = laneResolver, trusted.resolvesItself(name),
              ResolutionOutcome.literal(for: name, family: family, routing: resolver.upstream) == nil
        else { return later(job.tag) { resolver.resolveDetailed(name, family: family, completion: $0) } }
        let cache = resolver.cache
        let now = cache.clock.nanoseconds()
        let found = cache.find(name, family: family, now: now, counting: true, claimingRefresh: true)
        switch found {
        case .fresh(let entry):
            if entry.refreshClaimed { resolver.refresh(name, family: family, generation: entry.generation, now: now) }
            sink(job.tag, .success(cache.outcome(of: entry, now: now)))
            return true
        case .expired:
            // Serve-stale and its timer: the task-based path, counted once already.
            return later(job.tag) { [resolver, family] done in
                resolver.resolveExpired(name, family: family, found: found, now: now, completion: done)
            }
        case .removed, .absent:
            break
        }
        let key = ResolutionCache.Key(name: name, family: family)
        let (flight, leads) = resolver.joinOrLead(key)
        guard leads else {
            return later(job.tag) { [cache] done in
                flight.whenFinished { result in
                    if case .success(let outcome) = result, outcome.source == .stale { cache.countStaleServed() }
                    done(result)
                }
            }
        }
        if let stored = resolver.storedMeanwhile(key) {
            let result = Result<ResolutionOutcome, ResolutionError>.success(stored)
            resolver.land(flight, for: key, with: result)
            sink(job.tag, result)
            return true
        }
        guard let message = AddressQuery.messages(for: name, types: RecordType.addressTypes(for: family))?.first else {
            return later(job.tag) { [resolver] done in resolver.fly(flight, for: key, completion: done) }
        }
        let query = LaneQuery(tag: job.tag, key: key, flight: flight, message: message)
        state.withLock { $0.lane.append(query) }
        return false
    }

    /// Starts a resolution with `begin`, whose completion hands the outcome to the sink; `true` when it
    /// came at once. A completion that comes later takes the next queued job itself.
    private func later(_ tag: Int,
                       _ begin: (@escaping @Sendable (Result<ResolutionOutcome, ResolutionError>) -> Void) -> Void) -> Bool {
        let handoff = Handoff()
        begin { [self] outcome in
            sink(tag, outcome)
            guard handoff.completedLater() else { return }
            finishedOne()
        }
        return handoff.returned()
    }

    /// A resolution ended later than it started: the next queued job takes its place, and its query goes
    /// out with the others of the round.
    private func finishedOne() {
        guard let next = state.withLock({ $0.next() }) else { return flush() }
        drive(next)
        flush()
    }

    /// Hands the misses waiting in ``State/lane`` over as one block: at once, or, on a c-ares thread, once
    /// its round has delivered every reply it read (so that the replies of one `poll(2)` wake-up make one
    /// block).
    private func flush() {
        if AresRound.current != nil {
            let first = state.withLock { state -> Bool in
                guard !state.lane.isEmpty, !state.flushDeferred else { return false }
                state.flushDeferred = true
                return true
            }
            if first { AresRound.afterCurrent { [self] in send() } }
            return
        }
        send()
    }

    private func send() {
        let queries = state.withLock { state -> [LaneQuery] in
            state.flushDeferred = false
            defer { state.lane.removeAll() }
            return state.lane
        }
        guard let first = queries.first, let trusted = laneResolver else { return }
        guard let lane = trusted.lane(probingWith: first.key.name, family: family) else {
            for query in queries {
                resolver.fly(query.flight, for: query.key) { [self] result in
                    sink(query.tag, result)
                    finishedOne()
                }
            }
            return
        }
        lane.meter.sent(queries.count)
        let block = AresQueryBlock(queries: queries.map(\.message)) { [self] index, exchange in
            let query = queries[index]
            let name = query.key.name
            if let received = trusted.laneOutcome(exchange, lane: lane, name: name, family: family) {
                landed(query, resolver.settle(received, for: query.key, refreshing: nil))
            } else {
                trusted.laneFailed(exchange, lane: lane, name: name, family: family) { [self] received in
                    landed(query, resolver.settle(received, for: query.key, refreshing: nil))
                }
            }
        }
        lane.channel.submit(block)
    }

    /// Ends `query`'s flight with `result` and hands it to the sink, as the resolver's own flights end.
    private func landed(_ query: LaneQuery, _ result: Result<ResolutionOutcome, ResolutionError>) {
        resolver.land(query.flight, for: query.key, with: result)
        if case .success(let outcome) = result, outcome.source == .stale { resolver.cache.countStaleServed() }
        sink(query.tag, result)
        finishedOne()
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
