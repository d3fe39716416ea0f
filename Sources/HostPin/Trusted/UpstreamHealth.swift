import Synchronization

/// Which trusted upstreams are answering, and when to try again one that is not: HostPin's own memory of
/// failing servers (c-ares 1.18 has none, so without it every query would wait out a dead first upstream).
///
/// An upstream that fails a query (timeout, SERVFAIL, REFUSED, a malformed answer) is *held down*: queries
/// ask the healthy upstreams first, in preference order, and the held one only when every healthy one has
/// failed too. The hold-down starts at ``TrustedResolver/Configuration/firstHoldDown`` and doubles with
/// each consecutive failure up to ``TrustedResolver/Configuration/maximumHoldDown`` (1 s, 2 s, 4 s, … 30 s
/// by default). When it has run out, the next resolution claims one *probe*: a real query for that
/// resolution's name, sent to the held upstream in the background while the resolution itself goes on with
/// the healthy ones. An answer (NXDOMAIN and NODATA included) makes the upstream healthy again, so
/// traffic returns to the preferred upstream; a failure holds it down for the next, longer period.
///
/// Time is measured on a ``MonotonicClock``; tests pass one they move by hand. Safe to use from any thread.
public final class UpstreamHealth: Sendable {
    /// What HostPin currently thinks of one upstream.
    public enum Status: Sendable, Hashable, CustomStringConvertible {
        /// Answering: asked in preference order.
        case healthy
        /// Failed `failures` times in a row; asked only after every healthy upstream, until `remaining`
        /// has passed (zero once a probe is due).
        case heldDown(failures: Int, remaining: Duration)
        /// Held down after `failures` consecutive failures, with a probe query in flight.
        case probing(failures: Int)

        public var description: String {
            switch self {
            case .healthy: "healthy"
            case .heldDown(let failures, let remaining):
                "held down after \(failures) failure\(failures == 1 ? "" : "s"), \(remaining.formattedSeconds) left"
            case .probing(let failures): "probing after \(failures) failure\(failures == 1 ? "" : "s")"
            }
        }
    }

    /// The order one resolution asks the upstreams in, and the held-down upstreams it probes on the side.
    struct Plan: Sendable, Hashable {
        /// Indexes into the upstream list: the healthy ones in preference order, then the held-down ones.
        var order: [Int]
        /// Held-down upstreams whose hold-down has run out, claimed for one background probe each.
        var probes: [Int]
    }

    /// The pure state: no clock, no lock, no I/O. Times are monotonic nanoseconds.
    struct State: Sendable, Hashable {
        struct Entry: Sendable, Hashable {
            var failures = 0
            var heldUntil: UInt64?
            var probing = false
        }

        var entries: [Entry]
        let firstHoldDown: UInt64
        let maximumHoldDown: UInt64

        init(count: Int, firstHoldDown: UInt64, maximumHoldDown: UInt64) {
            entries = Array(repeating: Entry(), count: count)
            self.firstHoldDown = firstHoldDown
            self.maximumHoldDown = max(firstHoldDown, maximumHoldDown)
        }

        /// Healthy first, held-down last, each in preference order; claims the probes that are due. When no
        /// upstream is healthy every one is asked in the foreground anyway, so nothing is probed on the side.
        mutating func plan(now: UInt64) -> Plan {
            var healthy: [Int] = []
            var held: [Int] = []
            var due: [Int] = []
            for (index, entry) in entries.enumerated() {
                guard let heldUntil = entry.heldUntil else {
                    healthy.append(index)
                    continue
                }
                held.append(index)
                if !entry.probing && now >= heldUntil { due.append(index) }
            }
            guard !healthy.isEmpty else { return Plan(order: held, probes: []) }
            for index in due { entries[index].probing = true }
            return Plan(order: healthy + held, probes: due)
        }

        mutating func succeeded(_ index: Int) {
            entries[index] = Entry()
        }

        mutating func failed(_ index: Int, now: UInt64) {
            entries[index].failures += 1
            entries[index].probing = false
            entries[index].heldUntil = now + holdDown(afterFailures: entries[index].failures)
        }

        /// A probe ended without a verdict (cancelled): the next resolution may claim it again.
        mutating func abandoned(_ index: Int) {
            entries[index].probing = false
        }

        /// `firstHoldDown × 2^(failures − 1)`, at most `maximumHoldDown`.
        func holdDown(afterFailures failures: Int) -> UInt64 {
            let doublings = min(max(failures - 1, 0), 32)
            let (doubled, overflow) = firstHoldDown.multipliedReportingOverflow(by: 1 << UInt64(doublings))
            return overflow ? maximumHoldDown : min(doubled, maximumHoldDown)
        }

        func status(of index: Int, now: UInt64) -> Status {
            let entry = entries[index]
            guard let heldUntil = entry.heldUntil else { return .healthy }
            if entry.probing { return .probing(failures: entry.failures) }
            return .heldDown(failures: entry.failures,
                             remaining: .nanoseconds(heldUntil > now ? Int64(heldUntil - now) : 0))
        }
    }

    /// The upstreams tracked, in preference order.
    public let upstreams: [Upstream]
    private let clock: any MonotonicClock
    private let state: Mutex<State>

    /// Tracks `upstreams`, all healthy to begin with.
    ///
    /// - Parameters:
    ///   - upstreams: The trusted upstreams in preference order.
    ///   - firstHoldDown: How long an upstream is avoided after its first failure in a row.
    ///   - maximumHoldDown: The longest hold-down, however many failures follow; raised to
    ///     `firstHoldDown` when smaller.
    ///   - clock: The monotonic clock hold-downs are measured on.
    public init(upstreams: [Upstream], firstHoldDown: Duration, maximumHoldDown: Duration,
                clock: any MonotonicClock = SystemMonotonicClock()) {
        self.upstreams = upstreams
        self.clock = clock
        state = Mutex(State(count: upstreams.count, firstHoldDown: firstHoldDown.nanosecondsClampedAtZero,
                            maximumHoldDown: maximumHoldDown.nanosecondsClampedAtZero))
    }

    /// What HostPin currently thinks of `upstream`; `nil` when it is not one of ``upstreams``.
    public func status(of upstream: Upstream) -> Status? {
        guard let index = upstreams.firstIndex(of: upstream) else { return nil }
        let now = clock.nanoseconds()
        return state.withLock { $0.status(of: index, now: now) }
    }

    /// What HostPin currently thinks of the upstream at `index` in ``upstreams``.
    func status(at index: Int) -> Status {
        let now = clock.nanoseconds()
        return state.withLock { $0.status(of: index, now: now) }
    }

    func plan() -> Plan {
        let now = clock.nanoseconds()
        return state.withLock { $0.plan(now: now) }
    }

    func recordSuccess(_ index: Int) {
        state.withLock { $0.succeeded(index) }
    }

    func recordFailure(_ index: Int) {
        let now = clock.nanoseconds()
        state.withLock { $0.failed(index, now: now) }
    }

    func recordAbandoned(_ index: Int) {
        state.withLock { $0.abandoned(index) }
    }
}

extension Duration {
    /// Whole nanoseconds, 0 for a negative duration, saturating at `UInt64.max`.
    var nanosecondsClampedAtZero: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return .max }
        let (sum, overflowed) = whole.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000))
        return overflowed ? .max : sum
    }
}
