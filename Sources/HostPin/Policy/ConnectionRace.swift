/// The staggered connection attempts to one host's addresses (RFC 8305 §5), as a pure state machine:
/// it opens no socket and reads no clock. Its caller starts what the actions say and reports each
/// attempt's end and each timer back.
///
/// The first address (of ``HappyEyeballs/order(_:)``) is attempted at once. The next starts when the
/// previous attempt fails or after the attempt delay with no connection yet, whichever comes first;
/// earlier attempts keep running. The first attempt to connect wins and every other is abandoned; the
/// race is lost when every address was attempted and every attempt failed. Attempts are named by their
/// index in the attempt order.
public struct ConnectionRace: Sendable {
    /// What the caller must do next.
    public enum Action: Sendable, Hashable {
        /// Start connecting to the address at this index.
        case connect(Int)
        /// Report ``ConnectionRace/timerFired(_:)`` with this timer after the delay (seconds on a
        /// monotonic clock). A timer started earlier is void from now on; cancelling it is optional.
        case startTimer(Timer, after: Duration)
        /// This attempt connected first: use its connection, and cancel the attempts listed (their
        /// connections, should any still be made, are closed: ``ConnectionRace/attemptConnected(_:)``
        /// answers ``abandon(_:)`` for them).
        case won(Int, cancel: [Int])
        /// Close this attempt's connection: the race was already over when it connected.
        case abandon(Int)
        /// Every attempt failed.
        case lost
    }

    /// One armed timer; only the latest one counts.
    public struct Timer: Sendable, Hashable {
        let generation: Int
    }

    /// Where the race stands.
    public enum Phase: Sendable, Hashable {
        case notStarted
        case running
        /// The attempt at this index connected.
        case won(Int)
        case lost
    }

    /// How many addresses there are to attempt.
    public let count: Int
    /// RFC 8305 §5's Connection Attempt Delay.
    public let attemptDelay: Duration
    public private(set) var phase = Phase.notStarted
    /// The next index to attempt.
    private var next = 0
    /// Attempts started that have neither connected nor failed, in start order.
    private var running: [Int] = []
    private var timerGeneration = 0

    /// - Parameters:
    ///   - count: How many addresses to attempt, in ``HappyEyeballs/order(_:)``'s order.
    ///   - attemptDelay: How long an attempt runs alone before the next starts.
    public init(count: Int, attemptDelay: Duration) {
        self.count = max(0, count)
        self.attemptDelay = attemptDelay
    }

    /// Starts the race: the first attempt (and the timer for the second), or ``Action/lost`` when there
    /// is no address.
    public mutating func start() -> [Action] {
        guard phase == .notStarted else { return [] }
        guard count > 0 else {
            phase = .lost
            return [.lost]
        }
        phase = .running
        return attemptNext()
    }

    /// The attempt at `index` failed: the next address is attempted at once, if one is left.
    public mutating func attemptFailed(_ index: Int) -> [Action] {
        guard phase == .running, let position = running.firstIndex(of: index) else { return [] }
        running.remove(at: position)
        if next < count { return attemptNext() }
        guard running.isEmpty else { return [] }
        phase = .lost
        return [.lost]
    }

    /// The attempt at `index` connected: it wins unless another already did.
    public mutating func attemptConnected(_ index: Int) -> [Action] {
        guard phase == .running, let position = running.firstIndex(of: index) else {
            return (0..<next).contains(index) ? [.abandon(index)] : []
        }
        running.remove(at: position)
        phase = .won(index)
        defer { running = [] }
        return [.won(index, cancel: running)]
    }

    /// `timer` ran out: if it is the latest and no attempt has connected, the next address is attempted.
    public mutating func timerFired(_ timer: Timer) -> [Action] {
        guard phase == .running, timer.generation == timerGeneration, next < count else { return [] }
        return attemptNext()
    }

    private mutating func attemptNext() -> [Action] {
        let index = next
        next += 1
        running.append(index)
        guard next < count else { return [.connect(index)] }
        timerGeneration += 1
        return [.connect(index), .startTimer(Timer(generation: timerGeneration), after: attemptDelay)]
    }
}
