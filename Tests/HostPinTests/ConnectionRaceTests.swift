import HostPin
import Testing

/// RFC 8305 §5's staggered attempts, driven event by event: pure, no sockets, no clock.
@Suite struct ConnectionRaceTests {
    private static let delay = Duration.milliseconds(250)

    /// The timer an action list starts.
    private func timer(in actions: [ConnectionRace.Action]) throws -> ConnectionRace.Timer {
        for case .startTimer(let timer, after: let delay) in actions {
            #expect(delay == Self.delay)
            return timer
        }
        Issue.record("no timer in \(actions)")
        throw CancellationError()
    }

    @Test func firstAttemptStartsAloneWithATimerForTheNext() throws {
        var race = ConnectionRace(count: 2, attemptDelay: Self.delay)
        let actions = race.start()
        #expect(actions.first == .connect(0))
        _ = try timer(in: actions)
        #expect(actions.count == 2)
        #expect(race.phase == .running)
    }

    @Test func silentAttemptGetsCompanyAfterTheDelayAndTheFirstToConnectWins() throws {
        var race = ConnectionRace(count: 2, attemptDelay: Self.delay)
        let first = try timer(in: race.start())
        #expect(race.timerFired(first) == [.connect(1)])  // the black-holed attempt keeps running
        #expect(race.attemptConnected(1) == [.won(1, cancel: [0])])
        #expect(race.phase == .won(1))
        #expect(race.attemptFailed(0) == [])  // the cancelled attempt's end changes nothing
    }

    @Test func failureStartsTheNextAtOnceAndVoidsTheOldTimer() throws {
        var race = ConnectionRace(count: 3, attemptDelay: Self.delay)
        let first = try timer(in: race.start())
        let actions = race.attemptFailed(0)
        #expect(actions.first == .connect(1))
        let second = try timer(in: actions)
        #expect(second != first)
        #expect(race.timerFired(first) == [])
        #expect(race.timerFired(second) == [.connect(2)])
    }

    @Test func lateWinnerIsAbandoned() throws {
        var race = ConnectionRace(count: 2, attemptDelay: Self.delay)
        let first = try timer(in: race.start())
        _ = race.timerFired(first)
        #expect(race.attemptConnected(0) == [.won(0, cancel: [1])])
        #expect(race.attemptConnected(1) == [.abandon(1)])
    }

    @Test func raceIsLostOnlyWhenEveryAttemptFailed() throws {
        var race = ConnectionRace(count: 2, attemptDelay: Self.delay)
        let first = try timer(in: race.start())
        #expect(race.timerFired(first) == [.connect(1)])
        #expect(race.attemptFailed(1) == [])  // attempt 0 still runs
        #expect(race.phase == .running)
        #expect(race.attemptFailed(0) == [.lost])
        #expect(race.phase == .lost)
    }

    @Test func lastAddressStartsWithoutATimer() throws {
        var race = ConnectionRace(count: 2, attemptDelay: Self.delay)
        _ = race.start()
        #expect(race.attemptFailed(0) == [.connect(1)])
        #expect(race.attemptFailed(1) == [.lost])
    }

    @Test func oneAddressNeedsNoTimer() {
        var race = ConnectionRace(count: 1, attemptDelay: Self.delay)
        #expect(race.start() == [.connect(0)])
        #expect(race.attemptConnected(0) == [.won(0, cancel: [])])
    }

    @Test func noAddressLosesAtOnce() {
        var race = ConnectionRace(count: 0, attemptDelay: Self.delay)
        #expect(race.start() == [.lost])
        #expect(race.start() == [])
    }

    @Test func timerAfterTheWinStartsNothing() throws {
        var race = ConnectionRace(count: 3, attemptDelay: Self.delay)
        let first = try timer(in: race.start())
        _ = race.attemptConnected(0)
        #expect(race.timerFired(first) == [])
    }
}
