/// Watches the local (untrusted) resolver over time: a sample of the trusted answers a service hands out
/// is compared, in the background, with what the local resolver says for the same name, and each name
/// found hijacked is reported once.
///
/// ``offer(_:family:)`` never waits: it judges the answer against the rate limits
/// (``Configuration/nameInterval``, ``Configuration/overallInterval``) and a bounded queue
/// (``Configuration/queueCapacity``: full means dropped, and counted) under one lock, and returns. One
/// worker task takes the queue in order and, for each name, asks the local resolver, runs the wildcard
/// probe when the local answer has addresses the trusted one does not, and judges with
/// ``HijackDetector``; the verdicts are counted (``statistics``), and the first hijacked verdict for a
/// name calls `onNewHijack`. The local answer is never handed out: it is only judged. The trusted answer
/// is the one offered, so a comparison sends no trusted query but the wildcard probe's.
///
/// One comparison runs at a time (one local question, two with the probe), and no more are queued than
/// one per ``Configuration/overallInterval``, so that is the local resolver's load on average (a backlog
/// after a slow answer is worked off at once, at most ``Configuration/queueCapacity``). Names reported
/// are remembered up to ``maximumReportedNames`` (the oldest is forgotten then, and may be reported
/// again).
public final class LocalResolverWatch: Sendable {
    /// The settings it was made with.
    public let configuration: Configuration
    /// The most names remembered as reported; beyond it the oldest is forgotten.
    public static let maximumReportedNames = 10_000

    private let core: WatchCore
    private let worker: Task<Void, Never>
    private let clock: any MonotonicClock

    /// Starts watching `local`.
    ///
    /// - Parameters:
    ///   - local: The resolver watched, e.g. an ``UntrustedResolver`` for the network's resolver.
    ///   - trusted: The trusted resolver, asked for the wildcard probe's random name only (a
    ///     ``TrustedResolver``; a cache in front of it would keep the random names).
    ///   - configuration: Rate limits, queue size, detector.
    ///   - clock: The monotonic clock the rate limits are measured on.
    ///   - onNewHijack: Called from the worker task, once per name, when a comparison first finds the
    ///     name hijacked. It should not block for long: the next comparison waits for it.
    public init(local: any HostResolver, trusted: any HostResolver, configuration: Configuration = Configuration(),
                clock: any MonotonicClock = SystemMonotonicClock(),
                onNewHijack: @escaping @Sendable (HijackReport) -> Void) {
        self.configuration = configuration
        self.clock = clock
        let core = WatchCore(WatchQueue(nameInterval: configuration.nameInterval,
                                        overallInterval: configuration.overallInterval,
                                        capacity: configuration.queueCapacity))
        self.core = core
        let comparer = WatchComparer(local: local, trusted: trusted, detector: configuration.detector,
                                     probesWildcard: configuration.probesWildcard)
        // Unstructured: the worker lives as long as the watch. It suspends on the queue or on the
        // resolvers, never blocks, and ends when the watch stops.
        worker = Task {
            while let item = await core.next() {
                guard let (verdict, local) = await comparer.compare(item) else { break }
                if let report = core.record(verdict, of: item, local: local) { onNewHijack(report) }
            }
        }
    }

    deinit {
        core.stop()
        worker.cancel()
    }

    /// Offers an answer the service just handed out for `family`: queued for comparison when the rate
    /// limits and the queue allow, else counted as skipped or dropped. Never waits.
    ///
    /// Only the trusted upstreams' answers count (source upstream, cache or negative cache: addresses,
    /// NXDOMAIN, NODATA); others (the untrusted fallback's, stale, literal, pinned) are
    /// ``Decision/notCompared``.
    @discardableResult
    public func offer(_ outcome: ResolutionOutcome, family: AddressFamily) -> Decision {
        let item: WatchQueue.Item
        switch outcome.answer {
        case .addresses(let resolution) where [.upstream, .cache].contains(resolution.source):
            item = WatchQueue.Item(name: resolution.name, family: family, trusted: .addresses(resolution))
        case .negative(let negative) where [.upstream, .negativeCache].contains(negative.source):
            item = WatchQueue.Item(name: negative.name, family: family,
                                   trusted: negative.kind == .nxdomain ? .nxdomain : .nodata)
        default:
            return core.notCompared()
        }
        return core.offer(item, now: clock.nanoseconds())
    }

    /// Offers the trusted side's answer `trusted` for `name` and `family`, as ``offer(_:family:)`` does.
    @discardableResult
    public func offer(_ name: HostName, family: AddressFamily, trusted: TrustedAnswer) -> Decision {
        core.offer(WatchQueue.Item(name: name, family: family, trusted: trusted), now: clock.nanoseconds())
    }

    /// The counts so far.
    public var statistics: Statistics { core.statistics }

    /// Stops watching: later offers are not compared, the queued ones are dropped, the comparison in
    /// flight is cancelled (its local query abandoned, its verdict not counted); returns once the worker
    /// has ended. Idempotent.
    public func stop() async {
        core.stop()
        worker.cancel()
        await worker.value
    }
}
