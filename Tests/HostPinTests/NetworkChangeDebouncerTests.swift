import HostPin
import Testing

/// Bursts of network events gathered into one change, on a clock the test moves by hand.
@Suite struct NetworkChangeDebouncerTests {
    let start = ContinuousClock.now

    @Test func burstEndsAfterOneQuietSecondWithEveryCount() {
        var debouncer = NetworkChangeDebouncer()
        #expect(debouncer.deadline == nil)
        debouncer.note(.linkDown, at: start)
        debouncer.note(.addressRemoved, at: start + .milliseconds(100))
        debouncer.note(.linkUp, at: start + .milliseconds(300))
        debouncer.note(.addressAdded, at: start + .milliseconds(400))
        debouncer.note(.defaultRouteChanged, at: start + .milliseconds(450))
        #expect(debouncer.deadline == start + .milliseconds(1_450))
        #expect(debouncer.take(at: start + .milliseconds(1_449)) == nil)
        let change = debouncer.take(at: start + .milliseconds(1_450))
        var expected = NetworkChange()
        (expected.linksDown, expected.addressesRemoved, expected.linksUp) = (1, 1, 1)
        (expected.addressesAdded, expected.defaultRoutesChanged) = (1, 1)
        #expect(change == expected)
        #expect(change?.description == "1 address added, 1 address removed, 1 link up, 1 link down, 1 default route changed")
        #expect(debouncer.deadline == nil)
        #expect(debouncer.take(at: start + .seconds(10)) == nil)
    }

    @Test func floodNeverQuietStillEndsAtTheLongest() {
        var debouncer = NetworkChangeDebouncer(quiet: .seconds(1), longest: .seconds(5))
        var changes: [NetworkChange] = []
        // 10 000 address changes a second for 12 s: a burst ends every 5 s, never one per message.
        for step in 0..<120_000 {
            let now = start + .microseconds(100 * step)
            debouncer.note(step % 2 == 0 ? .addressAdded : .addressRemoved, at: now)
            if let change = debouncer.take(at: now) { changes.append(change) }
        }
        #expect(changes.count == 2)
        #expect(changes.first?.events == 50_001)
        #expect(debouncer.take(at: start + .seconds(13)) != nil)
    }

    @Test func lostEventsCountAndSayTheyWereLost() {
        var debouncer = NetworkChangeDebouncer(quiet: .milliseconds(200))
        debouncer.note(.eventsLost, at: start)
        let change = debouncer.take(at: start + .milliseconds(200))
        #expect(change?.eventsLost == 1)
        #expect(change?.description == "notifications lost")
        #expect(NetworkChange().description == "no change")
    }
}
