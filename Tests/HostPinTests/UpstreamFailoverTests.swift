import HostPin
import HostPinTestSupport
import Synchronization
import Testing

/// Failover between trusted upstreams, hold-down and switch-back, against real servers: the lab's NSD,
/// NSD instances owned by one test (stopped and restarted by PID), and `scripts/fault-dns` instances.
/// Hold-downs run on a ``ManualClock``; only behaviour-defining bounds are timed, with wide margins.
@Suite struct UpstreamFailoverTests {
    let lab: Lab

    init() throws {
        lab = try Lab.current()
    }

    private func configuration(_ upstreams: [Upstream], timeout: Duration = .seconds(1), tries: Int = 1)
        -> TrustedResolver.Configuration
    {
        // Fault servers of the test's own, which cannot answer DS/DNSKEY: DNSSEC off.
        var configuration = TrustedResolver.Configuration.ownServer(upstreams)
        configuration.timeout = timeout
        configuration.tries = tries
        return configuration
    }

    @Test func primaryKilledAnswersComeFromTheSecondWithinOneTimeout() async throws {
        let primary = try await AuthoritativeServer()
        let clock = ManualClock()
        let resolver = try TrustedResolver(
            configuration: configuration([primary.address, lab.trustedDNS2], timeout: .seconds(2), tries: 2),
            clock: clock)
        #expect(try await resolver.resolve("www.example.test", family: .v4).upstream == primary.address)

        await primary.stop()
        let (resolution, elapsed) = try await timed { try await resolver.resolve("www.example.test", family: .v4) }
        #expect(resolution.upstream == lab.trustedDNS2)
        #expect(resolution.ipAddresses.map(\.description) == ["127.0.0.10"])
        #expect(elapsed < .seconds(2))  // one per-try timeout; a closed port fails at once (ICMP unreachable)
        #expect(resolver.health.status(of: primary.address) == .heldDown(failures: 1, remaining: .seconds(1)))
        #expect(resolver.health.status(of: lab.trustedDNS2) == .healthy)
    }

    @Test func blackHoleFirstAnswersFromTheSecondAndLaterQueriesSkipIt() async throws {
        let blackHole = try await FaultServer(mode: .drop, upstream: nil)
        let resolver = try TrustedResolver(configuration: configuration([blackHole.address, lab.trustedDNS]),
                                           clock: ManualClock())
        let (first, firstElapsed) = try await timed { try await resolver.resolve("www.example.test", family: .v4) }
        #expect(first.upstream == lab.trustedDNS)
        #expect(firstElapsed >= .seconds(1))  // it waited out the black hole's one try
        #expect(resolver.health.status(of: blackHole.address) == .heldDown(failures: 1, remaining: .seconds(1)))

        for name in ["www.example.test", "cdn.example.test", "alias.example.test"] {
            let (later, elapsed) = try await timed { try await resolver.resolve(name, family: .v4) }
            #expect(later.upstream == lab.trustedDNS)
            #expect(elapsed < .milliseconds(500))  // far below the 1 s timeout: the black hole was skipped
        }
        #expect(blackHole.queries == [FaultServer.Query(transport: "udp", type: "A", name: "www.example.test", mode: "drop")])
    }

    @Test func heldDownUpstreamIsProbedInTheBackgroundWithDoublingHoldDowns() async throws {
        let blackHole = try await FaultServer(mode: .drop, upstream: nil)
        let clock = ManualClock()
        var settings = configuration([blackHole.address, lab.trustedDNS])
        settings.maximumHoldDown = .seconds(3)
        let resolver = try TrustedResolver(configuration: settings, clock: clock)
        _ = try await resolver.resolve("www.example.test", family: .v4)
        #expect(resolver.health.status(of: blackHole.address) == .heldDown(failures: 1, remaining: .seconds(1)))

        let expected: [(failures: Int, remaining: Duration)] = [(2, .seconds(2)), (3, .seconds(3)), (4, .seconds(3))]
        var advance: Duration = .seconds(1)
        for step in expected {
            clock.advance(by: advance)
            let (resolution, elapsed) = try await timed { try await resolver.resolve("cdn.example.test", family: .v4) }
            #expect(resolution.upstream == lab.trustedDNS)
            #expect(elapsed < .milliseconds(500))  // the probe (1 s timeout) runs beside the resolution, not before it
            #expect(resolver.health.status(of: blackHole.address) == .probing(failures: step.failures - 1))
            try await waitUntil { resolver.health.status(of: blackHole.address) != .probing(failures: step.failures - 1) }
            #expect(resolver.health.status(of: blackHole.address)
                        == .heldDown(failures: step.failures, remaining: step.remaining))
            advance = step.remaining
        }
        #expect(blackHole.queries.map(\.name) == ["www.example.test"] + Array(repeating: "cdn.example.test", count: 3))
    }

    @Test func primaryRestartedTrafficReturnsToIt() async throws {
        let primary = try await AuthoritativeServer()
        let clock = ManualClock()
        let resolver = try TrustedResolver(configuration: configuration([primary.address, lab.trustedDNS2]),
                                           clock: clock)
        #expect(try await resolver.resolve("www.example.test", family: .v4).upstream == primary.address)
        await primary.stop()
        #expect(try await resolver.resolve("www.example.test", family: .v4).upstream == lab.trustedDNS2)

        try await primary.start()
        let baseline = try await primary.queries()
        #expect(try await resolver.resolve("www.example.test", family: .v4).upstream == lab.trustedDNS2)
        #expect(try await primary.queries() == baseline)  // still held down: not asked

        clock.advance(by: .seconds(1))
        #expect(try await resolver.resolve("cdn.example.test", family: .v4).upstream == lab.trustedDNS2)
        try await waitUntil { resolver.health.status(of: primary.address) == .healthy }  // the probe answered
        #expect(try await primary.queries() == baseline + 1)

        let back = try await resolver.resolve("www.example.test", family: .v4)
        #expect(back.upstream == primary.address)
        #expect(try await primary.queries() == baseline + 2)
    }

    @Test(arguments: [FaultServer.Mode.servfail, .refused])
    func failingAnswerMovesToTheNextUpstream(mode: FaultServer.Mode) async throws {
        let failing = try await FaultServer(mode: mode, upstream: nil)
        let resolver = try TrustedResolver(configuration: configuration([failing.address, lab.trustedDNS], tries: 2),
                                           clock: ManualClock())
        let resolution = try await resolver.resolve("www.example.test", family: .v4)
        #expect(resolution.upstream == lab.trustedDNS)
        #expect(resolution.ipAddresses.map(\.description) == ["127.0.0.10"])
        #expect(failing.queries.map(\.mode) == [mode.name])  // no retry at an upstream that said no
        // An answer about one name, not an outage: the upstream stays healthy and is asked first again.
        #expect(resolver.health.status(of: failing.address) == .healthy)
        #expect(try await resolver.resolve("cdn.example.test", family: .v4).upstream == lab.trustedDNS)
        #expect(failing.queries.map(\.name) == ["www.example.test", "cdn.example.test"])

        let alone = try TrustedResolver(configuration: configuration([failing.address]))
        await #expect(throws: ResolutionError.upstreamsFailed(
            [UpstreamFailure(upstream: failing.address, reason: mode == .servfail ? .servfail : .refused)])) {
            try await alone.resolve("www.example.test", family: .v4)
        }
    }

    @Test func everyUpstreamFailingIsNamedInTheError() async throws {
        let first = try await FaultServer(mode: .drop, upstream: nil)
        let second = try await FaultServer(mode: .servfail, upstream: nil)
        let resolver = try TrustedResolver(configuration: configuration([first.address, second.address],
                                                                       timeout: .milliseconds(200)))
        await #expect(throws: ResolutionError.upstreamsFailed([
            UpstreamFailure(upstream: first.address, reason: .timeout),
            UpstreamFailure(upstream: second.address, reason: .servfail),
        ])) {
            try await resolver.resolve("www.example.test", family: .v4)
        }
    }

    @Test func allBlackHolesFailWithinTheBudgetNamingEachUpstream() async throws {
        let first = try await FaultServer(mode: .drop, upstream: nil)
        let second = try await FaultServer(mode: .drop, upstream: nil)
        var settings = configuration([first.address, second.address], timeout: .milliseconds(500))
        settings.budget = .milliseconds(800)
        let resolver = try TrustedResolver(configuration: settings)
        let (error, elapsed) = await timed {
            await #expect(throws: ResolutionError.self) { try await resolver.resolve("www.example.test", family: .v4) }
        }
        // The first timed out after 500 ms; the second was still being asked when the budget ran out.
        #expect(error == .timeout(budget: .milliseconds(800), [
            UpstreamFailure(upstream: first.address, reason: .timeout),
            UpstreamFailure(upstream: second.address, reason: .timeout),
        ]))
        #expect(elapsed < .milliseconds(1500))  // 800 ms budget; the two timeouts alone would take 1 s
        #expect(first.queries.count == 1)
        #expect(second.queries.count == 1)
    }

    /// One name through ``CachingResolver/resolveMany(family:concurrency:sink:)``, whose first upstream is
    /// asked without a task and whose failover continues in one.
    private func batchOutcome(_ resolver: TrustedResolver, _ name: String) async throws
        -> Result<ResolutionOutcome, ResolutionError>
    {
        let (outcomes, sink) = AsyncStream.makeStream(of: Result<ResolutionOutcome, ResolutionError>.self)
        let batch = CachingResolver(upstream: resolver).resolveMany(family: .v4, concurrency: 1) { _, outcome in
            sink.yield(outcome)
            sink.finish()
        }
        batch.submit(try HostName.parse(name), tag: 0)
        var iterator = outcomes.makeAsyncIterator()
        return try #require(await iterator.next())
    }

    @Test func batchFailsOverToTheNextUpstream() async throws {
        let failing = try await FaultServer(mode: .servfail, upstream: nil)
        let resolver = try TrustedResolver(configuration: configuration([failing.address, lab.trustedDNS]),
                                           clock: ManualClock())
        let resolution = try await batchOutcome(resolver, "www.example.test").get().get()
        #expect(resolution.upstream == lab.trustedDNS)
        #expect(resolution.ipAddresses.map(\.description) == ["127.0.0.10"])
        #expect(failing.queries.map(\.name) == ["www.example.test"])
        #expect(resolver.health.status(of: failing.address) == .healthy)  // one name's SERVFAIL is no outage
    }

    @Test func batchNamesEveryFailingUpstream() async throws {
        let first = try await FaultServer(mode: .drop, upstream: nil)
        let second = try await FaultServer(mode: .servfail, upstream: nil)
        let resolver = try TrustedResolver(configuration: configuration([first.address, second.address],
                                                                       timeout: .milliseconds(200)))
        #expect(try await batchOutcome(resolver, "www.example.test").map(\.source) == .failure(.upstreamsFailed([
            UpstreamFailure(upstream: first.address, reason: .timeout),
            UpstreamFailure(upstream: second.address, reason: .servfail),
        ])))
    }

    @Test func batchOfBlackHolesEndsWithinTheBudget() async throws {
        let first = try await FaultServer(mode: .drop, upstream: nil)
        let second = try await FaultServer(mode: .drop, upstream: nil)
        var settings = configuration([first.address, second.address], timeout: .milliseconds(500))
        settings.budget = .milliseconds(800)
        let resolver = try TrustedResolver(configuration: settings)
        let (outcome, elapsed) = try await timed { try await batchOutcome(resolver, "www.example.test") }
        #expect(outcome.map(\.source) == .failure(.timeout(budget: .milliseconds(800), [
            UpstreamFailure(upstream: first.address, reason: .timeout),
            UpstreamFailure(upstream: second.address, reason: .timeout),
        ])))
        #expect(elapsed < .milliseconds(1500))  // 800 ms budget; the two timeouts alone would take 1 s
    }

    @Test func truncatedAnswerIsRetriedOverTCPAtTheSameUpstream() async throws {
        let truncating = try await FaultServer(mode: .truncate, upstream: lab.trustedDNS)
        let resolver = try TrustedResolver(configuration: .ownServer([truncating.address]))
        let resolution = try await resolver.resolve("big.example.test", family: .v4)
        #expect(resolution.upstream == truncating.address)
        #expect(resolution.addresses.count == 100)
        #expect(truncating.queries == [
            FaultServer.Query(transport: "udp", type: "A", name: "big.example.test", mode: "truncate"),
            FaultServer.Query(transport: "tcp", type: "A", name: "big.example.test", mode: "truncate"),
        ])
    }

    @Test func truncatedAnswerWithoutTCPMovesToTheNextUpstream() async throws {
        let truncating = try await FaultServer(mode: .truncateWithoutTCP, upstream: lab.trustedDNS)
        let resolver = try TrustedResolver(configuration: configuration([truncating.address, lab.trustedDNS]),
                                           clock: ManualClock())
        let resolution = try await resolver.resolve("www.example.test", family: .v4)
        #expect(resolution.upstream == lab.trustedDNS)
        #expect(truncating.queries.map(\.transport) == ["udp", "tcp"])
        #expect(resolver.health.status(of: truncating.address) == .heldDown(failures: 1, remaining: .seconds(1)))
    }

    @Test func tcpOnlyModeSendsNoUDP() async throws {
        let server = try await FaultServer(mode: .answer, upstream: lab.trustedDNS)
        var settings = configuration([server.address])
        settings.useTCP = true
        let resolver = try TrustedResolver(configuration: settings)
        let resolution = try await resolver.resolve("www.example.test", family: .any)
        #expect(resolution.ipAddresses.map(\.description) == ["127.0.0.10"])
        #expect(Set(server.queries) == [
            FaultServer.Query(transport: "tcp", type: "A", name: "www.example.test", mode: "answer"),
            FaultServer.Query(transport: "tcp", type: "AAAA", name: "www.example.test", mode: "answer"),
        ])
    }

    @Test func slowUpstreamWithinTheTimeoutStillAnswers() async throws {
        let slow = try await FaultServer(mode: .delay(.milliseconds(300)), upstream: lab.trustedDNS)
        let resolver = try TrustedResolver(configuration: configuration([slow.address, lab.trustedDNS2],
                                                                       timeout: .seconds(2)))
        let resolution = try await resolver.resolve("www.example.test", family: .v4)
        #expect(resolution.upstream == slow.address)
        #expect(resolver.health.status(of: slow.address) == .healthy)
    }
}

/// Runs `body` and measures it on the continuous clock.
func timed<T>(_ body: () async throws -> T) async rethrows -> (T, Duration) {
    let clock = ContinuousClock()
    let start = clock.now
    let value = try await body()
    return (value, clock.now - start)
}

/// Waits until `condition` holds, checking every 20 ms, for at most 5 seconds (then the caller's
/// expectations report what was seen).
func waitUntil(_ condition: () -> Bool) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(20)
    while !condition() && clock.now < deadline {
        try await Task.sleep(for: .milliseconds(20))
    }
}
