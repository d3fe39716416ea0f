@testable import HostPin
import Testing

/// Which failures hold an upstream down: any failure across names at once; SERVFAIL and REFUSED only as
/// the 10th distinct name within 10 s with no answer between. Pure state on a ``ManualClock``: no server.
@Suite struct UpstreamHealthTests {
    /// The upstream under test, and a second that stays healthy (with none healthy, nothing is probed).
    private static let upstreams = [Upstream("127.0.0.1:5300")!, Upstream("127.0.0.1:5301")!]
    private let clock = ManualClock()
    private let health: UpstreamHealth

    init() {
        health = UpstreamHealth(upstreams: Self.upstreams, firstHoldDown: .seconds(1), maximumHoldDown: .seconds(30),
                                clock: clock)
    }

    /// Records SERVFAIL for `names`, `spacing` apart (the clock moved before each but the first).
    private func servfail(_ names: [String], spacing: Duration = .zero, at index: Int = 0) {
        for (position, name) in names.enumerated() {
            if position > 0 { clock.advance(by: spacing) }
            health.recordFailure(index, .init(.servfail, name: name))
        }
    }

    private static func names(_ range: ClosedRange<Int>) -> [String] {
        range.map { "bad\($0).example.org" }
    }

    @Test(arguments: [UpstreamFailure.Reason.timeout, .unreachable, .badResponse, .other(code: 11, message: "x"),
                      .encrypted(.tlsFailed("handshake")), .encrypted(.httpStatus(503))])
    func aFailureAcrossNamesHoldsDownAtOnce(reason: UpstreamFailure.Reason) {
        #expect(UpstreamHealth.Failure(reason, name: "www.example.test") == .acrossNames)
        #expect(health.recordFailure(0, .init(reason, name: "www.example.test")))
        #expect(health.status(at: 0) == .heldDown(failures: 1, remaining: .seconds(1)))
    }

    @Test(arguments: [UpstreamFailure.Reason.servfail, .refused])
    func nineDistinctNamesLeaveItHealthyTheTenthHoldsItDown(reason: UpstreamFailure.Reason) {
        for name in Self.names(1...9) {
            #expect(!health.recordFailure(0, .init(reason, name: name)))
            clock.advance(by: .seconds(1))
        }
        #expect(health.status(at: 0) == .healthy)
        #expect(health.plan().order == [0, 1])
        // The 10th, 9 s after the first: 10 names within 10 s.
        #expect(health.recordFailure(0, .init(reason, name: "bad10.example.org")))
        #expect(health.status(at: 0) == .heldDown(failures: 1, remaining: .seconds(1)))
    }

    @Test func tenNamesWithinTenSecondsHoldItDownTheWindowsEndIncluded() {
        servfail(Self.names(1...10), spacing: .milliseconds(1111))  // the 10th 9.999 s after the first
        #expect(health.status(at: 0) == .heldDown(failures: 1, remaining: .seconds(1)))

        servfail(Self.names(1...9), at: 1)
        clock.advance(by: .seconds(10))  // the first nine 10 s ago: still within the window
        servfail(["bad10.example.org"], at: 1)
        #expect(health.status(at: 1) == .heldDown(failures: 1, remaining: .seconds(1)))
    }

    @Test func tenNamesSpreadOverMoreThanTenSecondsLeaveItHealthy() {
        servfail(Self.names(1...9))
        clock.advance(by: .seconds(10) + .milliseconds(1))  // the first nine are now over 10 s old
        servfail(["bad10.example.org"])
        #expect(health.status(at: 0) == .healthy)
        // Evenly spread, 1.2 s apart: any 10 s holds nine at most.
        clock.advance(by: .milliseconds(1200))
        servfail(Self.names(11...30), spacing: .milliseconds(1200))
        #expect(health.status(at: 0) == .healthy)
    }

    @Test func anAnswerBetweenStartsTheCountAfresh() {
        servfail(Self.names(1...5))
        health.recordSuccess(0)  // NXDOMAIN and NODATA are answers too
        servfail(Self.names(6...14))
        #expect(health.status(at: 0) == .healthy)
        servfail(["bad15.example.org"])  // the 10th since the answer
        #expect(health.status(at: 0) == .heldDown(failures: 1, remaining: .seconds(1)))
    }

    @Test func theSameNameTenTimesLeavesItHealthy() {
        servfail(Array(repeating: "bad.example.org", count: 10), spacing: .milliseconds(100))
        #expect(health.status(at: 0) == .healthy)
        servfail(Self.names(1...8))  // with it, nine distinct names
        #expect(health.status(at: 0) == .healthy)
    }

    @Test func whileHeldDownAProbesSERVFAILHoldsItAgainOnlyWhileTenNamesAreRecent() {
        servfail(Self.names(1...10))
        #expect(health.status(at: 0) == .heldDown(failures: 1, remaining: .seconds(1)))
        clock.advance(by: .seconds(1))
        #expect(health.plan().probes == [0])
        servfail(["probe1.example.org"])  // still 10 names within 10 s: held down for longer
        #expect(health.status(at: 0) == .heldDown(failures: 2, remaining: .seconds(2)))

        clock.advance(by: .seconds(11))  // every one of those names has aged out
        #expect(health.plan().probes == [0])
        #expect(health.status(at: 0) == .probing(failures: 2))
        servfail(["probe2.example.org"])  // one name's SERVFAIL: no verdict on reachability
        #expect(health.status(at: 0) == .heldDown(failures: 2, remaining: .zero))
        #expect(health.plan().probes == [0])  // so the next resolution probes again
        health.recordSuccess(0)
        #expect(health.status(at: 0) == .healthy)
    }

    @Test func aFailureAcrossNamesNeedsNoNameCount() {
        servfail(Self.names(1...3))
        health.recordFailure(0, .acrossNames)
        #expect(health.status(at: 0) == .heldDown(failures: 1, remaining: .seconds(1)))
    }
}
