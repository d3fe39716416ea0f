/// Gathers a burst of ``NetworkChange/Event``s into one ``NetworkChange``: a burst ends once no event came
/// for ``quiet`` (1 s by default), or ``longest`` (5 s) after its first event at the latest, so that a
/// flood of notifications (thousands of address changes a second) still gives one change per `longest`
/// at most, never one per message. A Wi-Fi hand-over sends a dozen messages within a few hundred
/// milliseconds (link down, addresses removed, link up, addresses and routes added).
///
/// Pure: no clock, no timer; the owner passes the time in and arms its timer for ``deadline``.
public struct NetworkChangeDebouncer: Sendable {
    /// How long the network must be quiet for a burst to end.
    public let quiet: Duration
    /// The longest a burst is held, counted from its first event.
    public let longest: Duration
    private var pending = NetworkChange()
    private var first: ContinuousClock.Instant?
    private var last: ContinuousClock.Instant?

    /// - Parameters:
    ///   - quiet: How long without an event ends a burst; 1 s by default.
    ///   - longest: The most a burst is held after its first event; 5 s by default, raised to `quiet`.
    public init(quiet: Duration = .seconds(1), longest: Duration = .seconds(5)) {
        self.quiet = quiet
        self.longest = max(quiet, longest)
    }

    /// Counts `event`, received at `now`, in the burst under way (or starts one).
    public mutating func note(_ event: NetworkChange.Event, at now: ContinuousClock.Instant) {
        pending.add(event)
        if first == nil { first = now }
        last = now
    }

    /// When the burst under way ends; `nil` with none under way.
    public var deadline: ContinuousClock.Instant? {
        guard let first, let last else { return nil }
        return min(last + quiet, first + longest)
    }

    /// The burst, once its ``deadline`` has passed at `now` (and a new one may start); `nil` before that
    /// or with none under way.
    public mutating func take(at now: ContinuousClock.Instant) -> NetworkChange? {
        guard let deadline, now >= deadline else { return nil }
        defer {
            pending = NetworkChange()
            first = nil
            last = nil
        }
        return pending
    }
}
