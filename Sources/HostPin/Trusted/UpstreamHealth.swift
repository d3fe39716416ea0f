import Synchronization

/// Which trusted upstreams are answering, and when to try again one that is not: HostPin's own memory of
/// failing servers (c-ares 1.18 has none, so without it every query would wait out a dead first upstream).
///
/// Every failure moves the query on to the next upstream; only some hold the failing one down for other
/// names (``Failure``). A failure that would hold for any name asked — a timeout, a refused port, a TLS or
/// HTTP failure of an encrypted upstream, a reply that is not a well-formed response — holds it down at
/// once. SERVFAIL and REFUSED are answers about one name (a zone the upstream does not serve, one broken
/// domain): they hold it down only once they came for 10 distinct names within 10 s with no answer
/// between, so that no client can take a healthy upstream down, and `/healthz` with it, by asking for
/// names it refuses. The same name again counts once; an answer (NXDOMAIN and NODATA included) starts the
/// count afresh. Unbound's per-zone lameness, which would skip the upstream for the failing zone only,
/// is not kept.
///
/// A held-down upstream is asked only after the healthy upstreams, in preference order, and only when
/// every healthy one has failed too. The hold-down starts at ``TrustedResolver/Configuration/firstHoldDown``
/// and doubles with each consecutive hold-down up to ``TrustedResolver/Configuration/maximumHoldDown`` (1 s,
/// 2 s, 4 s, … 30 s by default). When it has run out, the next resolution claims one *probe*: a real query
/// for that resolution's name, sent to the held upstream in the background while the resolution itself
/// goes on with the healthy ones. An answer (NXDOMAIN and NODATA included) makes the upstream healthy
/// again, so traffic returns to the preferred upstream; a failure that holds it down holds it for the
/// next, longer period, and a SERVFAIL or REFUSED that does not (fewer than 10 names in the last 10 s)
/// leaves it held with its probe due again at the next resolution.
///
/// Time is measured on a ``MonotonicClock``; tests pass one they move by hand. Safe to use from any thread.
public final class UpstreamHealth: Sendable {
    /// What HostPin currently thinks of one upstream.
    public enum Status: Sendable, Hashable, CustomStringConvertible {
        /// Answering: asked in preference order.
        case healthy
        /// Held down `failures` times in a row (each a failure across names, or the 10th name's SERVFAIL or
        /// REFUSED); asked only after every healthy upstream, until `remaining` has passed (zero once a
        /// probe is due).
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

    /// What kind of failure an upstream had: whether it says anything of the names not asked.
    enum Failure: Sendable, Hashable {
        /// A failure that would hold for any name: no reply in time, the port refused, a TLS or HTTP
        /// failure, a reply that is not a well-formed response to the query, any other c-ares status.
        /// Holds the upstream down at once.
        case acrossNames
        /// SERVFAIL or REFUSED for `name` (lower case, no final dot): the upstream is reachable and
        /// answered, only not for this name. Holds it down only as the 10th distinct name within 10 s with
        /// no answer between (``State/nameFailureThreshold``, ``State/nameFailureWindow``).
        case forName(String)

        /// The kind of `reason`, a failure of the query for `name`. (``UpstreamFailure/Reason/hijackedAnswer(_:)``
        /// is the untrusted fallback's, which has no health; it would be about one name's answer.)
        init(_ reason: UpstreamFailure.Reason, name: String) {
            switch reason {
            // A bogus answer is about one name's zone; an upstream that strips every signature reaches the
            // distinct-name threshold on its own.
            case .servfail, .refused, .hijackedAnswer, .dnssecBogus: self = .forName(name)
            case .timeout, .unreachable, .badResponse, .other, .encrypted: self = .acrossNames
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
            /// The distinct names SERVFAIL or REFUSED came for since the last answer, each with when it last
            /// did: the most recent ``State/nameFailureThreshold`` at most (older ones cannot matter).
            var failedNames: [FailedName] = []
        }

        struct FailedName: Sendable, Hashable {
            var name: String
            var at: UInt64
        }

        var entries: [Entry]
        let firstHoldDown: UInt64
        let maximumHoldDown: UInt64
        /// How many distinct names SERVFAIL or REFUSED must come for to hold an upstream down: 10.
        let nameFailureThreshold: Int
        /// How recent those failures must all be, in nanoseconds (10 s): a name counts while at most this
        /// long ago.
        let nameFailureWindow: UInt64

        init(count: Int, firstHoldDown: UInt64, maximumHoldDown: UInt64, nameFailureThreshold: Int = 10,
             nameFailureWindow: UInt64 = 10_000_000_000) {
            entries = Array(repeating: Entry(), count: count)
            self.firstHoldDown = firstHoldDown
            self.maximumHoldDown = max(firstHoldDown, maximumHoldDown)
            self.nameFailureThreshold = max(1, nameFailureThreshold)
            self.nameFailureWindow = nameFailureWindow
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

        /// Records `failure` of the upstream at `index`; returns whether it is held down for it.
        @discardableResult
        mutating func failed(_ index: Int, _ failure: Failure, now: UInt64) -> Bool {
            if case .forName(let name) = failure, !noteFailedName(name, at: index, now: now) {
                // Reachable, and says nothing of other names: not (again) held down. A probe that got this
                // has no verdict, so the next resolution may send another.
                entries[index].probing = false
                return false
            }
            entries[index].failures += 1
            entries[index].probing = false
            entries[index].heldUntil = now + holdDown(afterFailures: entries[index].failures)
            return true
        }

        /// Notes that SERVFAIL or REFUSED came for `name` at `now`; returns whether that makes
        /// ``nameFailureThreshold`` distinct names within ``nameFailureWindow``.
        private mutating func noteFailedName(_ name: String, at index: Int, now: UInt64) -> Bool {
            var names = entries[index].failedNames
            // `now` was read before the lock: another thread's later reading may be in already.
            names.removeAll { $0.name == name || (now > $0.at && now - $0.at > nameFailureWindow) }
            names.append(FailedName(name: name, at: now))
            if names.count > nameFailureThreshold { names.removeFirst(names.count - nameFailureThreshold) }
            entries[index].failedNames = names
            return names.count >= nameFailureThreshold
        }

        /// Every upstream healthy again, its failure counts cleared (a network change: what failed on the
        /// old path says nothing of the new one). A probe in flight still records its verdict.
        mutating func endHoldDowns() {
            for index in entries.indices where entries[index].heldUntil != nil || !entries[index].failedNames.isEmpty {
                entries[index] = Entry()
            }
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

    /// Records that the upstream at `index` failed a query with `failure`; returns whether that holds it
    /// down (again).
    @discardableResult
    func recordFailure(_ index: Int, _ failure: Failure) -> Bool {
        let now = clock.nanoseconds()
        return state.withLock { $0.failed(index, failure, now: now) }
    }

    /// Ends every hold-down (a network change, issue 30): each upstream is asked in preference order
    /// again, and the first failure on the new path holds it down afresh, from the first hold-down.
    public func endHoldDowns() {
        state.withLock { $0.endHoldDowns() }
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
