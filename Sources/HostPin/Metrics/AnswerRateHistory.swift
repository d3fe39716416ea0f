import Synchronization

/// Answers per second over the last hour, for the status page's chart: a ring of ``slotCount`` slots of
/// ``slot`` each (360 of 10 s by default), filled by sampling a running total of answers.
///
/// ``sample(total:now:)`` is called once per slot (the service's sampler task) and stores the answers
/// since the previous sample; ``points(total:now:)`` returns the slots kept, oldest first, then the slot
/// in progress measured up to `now`, so a chart has a point from the first read. Nothing on an answer's
/// path touches it: the total is the stub's (or the cache's) own atomic counters. Thread-safe.
public final class AnswerRateHistory: Sendable {
    /// One point of the chart.
    public struct Point: Sendable, Hashable {
        /// How long before the read the slot ended, in seconds (0 for the slot in progress).
        public var secondsAgo: Double
        /// Answers per second over the slot.
        public var perSecond: Double

        public init(secondsAgo: Double, perSecond: Double) {
            self.secondsAgo = secondsAgo
            self.perSecond = perSecond
        }
    }

    /// The length of one slot.
    public let slot: Duration
    /// The slots kept: the window is `slot × slotCount` (an hour by default).
    public let slotCount: Int

    private struct Sample: Sendable {
        /// When the slot ended, in nanoseconds of the monotonic clock.
        var end: UInt64
        /// Answers in the slot.
        var answers: UInt64
        /// The slot's length, in nanoseconds (the first may be shorter).
        var length: UInt64
    }

    private struct State {
        var samples: BoundedRing<Sample>
        /// The total and the time of the last sample (the start before the first).
        var lastTotal: UInt64
        var lastTime: UInt64
    }

    private let state: Mutex<State>

    /// An empty history starting at `now` (nanoseconds of a monotonic clock) with `total` answers so far.
    public init(slot: Duration = .seconds(10), slotCount: Int = 360, total: UInt64 = 0, now: UInt64) {
        self.slot = slot
        self.slotCount = max(1, slotCount)
        state = Mutex(State(samples: BoundedRing(capacity: slotCount), lastTotal: total, lastTime: now))
    }

    /// Ends the slot in progress at `now` with the running `total` of answers (a total below the last
    /// one, after a counter reset, counts as zero answers).
    public func sample(total: UInt64, now: UInt64) {
        state.withLock { state in
            let sample = Sample(end: now, answers: total >= state.lastTotal ? total - state.lastTotal : 0,
                                length: now > state.lastTime ? now - state.lastTime : 0)
            state.lastTotal = total
            state.lastTime = now
            state.samples.append(sample)
        }
    }

    /// The slots kept, oldest first, then the slot in progress up to `now` with the running `total`.
    public func points(total: UInt64, now: UInt64) -> [Point] {
        let (samples, lastTotal, lastTime) = state.withLock { state in
            (state.samples.oldestFirst, state.lastTotal, state.lastTime)
        }
        let current = Sample(end: now, answers: total >= lastTotal ? total - lastTotal : 0,
                             length: now > lastTime ? now - lastTime : 0)
        return (samples + [current]).compactMap { sample in
            guard sample.length > 0 else { return nil }
            return Point(secondsAgo: Double(now >= sample.end ? now - sample.end : 0) / 1e9,
                         perSecond: Double(sample.answers) / (Double(sample.length) / 1e9))
        }
    }
}
