import HostPin
import HostPinTestSupport
import Testing

/// Each trusted upstream's queries, failures by reason and round trips, counted where its replies are
/// read, against real servers: the lab's NSD and `scripts/fault-dns` instances. Hold-downs run on a
/// ``ManualClock``, so the order the upstreams are asked in is fixed.
@Suite(.serialized) struct UpstreamMetricsTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    private func resolver(_ upstreams: [Upstream], budget: Duration = .seconds(20), timeout: Duration = .seconds(1))
        throws -> TrustedResolver {
        // Fault servers of the test's own, which cannot answer DS/DNSKEY: DNSSEC off.
        var configuration = TrustedResolver.Configuration.ownServer(upstreams)
        configuration.budget = budget
        configuration.timeout = timeout
        configuration.tries = 1
        return try TrustedResolver(configuration: configuration, clock: ManualClock())
    }

    @Test func aServfailIsAFailureWithARoundTripAndTheNextUpstreamAnswers() async throws {
        let fault = try await FaultServer(mode: .servfail, upstream: nil)
        defer { fault.stop() }
        let resolver = try resolver([fault.address, lab.trustedDNS])
        #expect(try await resolver.resolve("www.example.test", family: .v4).upstream == lab.trustedDNS)

        let failing = try #require(resolver.metrics.snapshot(of: fault.address))
        #expect(failing.queries == 1)
        #expect(failing.failures[.servfail] == 1)
        #expect(failing.failures.values.reduce(0, +) == 1)
        #expect(failing.replies == 1)  // SERVFAIL is a reply: its round trip is timed
        let answering = try #require(resolver.metrics.snapshot(of: lab.trustedDNS))
        #expect(answering.queries == 1 && answering.replies == 1)
        #expect(answering.failures.values.reduce(0, +) == 0)
        #expect(answering.roundTripSeconds > 0 && answering.roundTripSeconds < 20)
    }

    @Test func bothFamiliesAreTwoQueriesAndAForwardedQuestionOne() async throws {
        let resolver = try resolver([lab.trustedDNS])
        _ = try await resolver.resolve("www.example.test", family: .any)
        _ = try await resolver.forward(try #require(ForwardedQuestion(name: "example.test", type: 15)))
        _ = try? await resolver.resolve("nx.example.test", family: .v4)  // NXDOMAIN is an answer, not a failure
        let snapshot = try #require(resolver.metrics.snapshot(of: lab.trustedDNS))
        #expect(snapshot.queries == 4)
        #expect(snapshot.replies == 4)
        #expect(snapshot.failures.values.reduce(0, +) == 0)
    }

    @Test func malformedAndRefusedRepliesAreCountedByReason() async throws {
        let fault = try await FaultServer(mode: .qrClear, upstream: lab.trustedDNS)
        defer { fault.stop() }
        let resolver = try resolver([fault.address])
        _ = try? await resolver.resolve("www.example.test", family: .v4)
        try fault.setMode(.refused)
        _ = try? await resolver.resolve("cdn.example.test", family: .v4)
        let snapshot = try #require(resolver.metrics.snapshot(of: fault.address))
        #expect(snapshot.queries == 2)
        #expect(snapshot.failures[.malformed] == 1)
        #expect(snapshot.failures[.refused] == 1)
    }

    @Test func aBudgetRunOutWaitingForABlackHoleIsATimeout() async throws {
        let blackHole = try await FaultServer(mode: .drop, upstream: nil)
        defer { blackHole.stop() }
        let resolver = try resolver([blackHole.address], budget: .milliseconds(300), timeout: .seconds(5))
        await #expect(throws: ResolutionError.self) { try await resolver.resolve("www.example.test", family: .v4) }
        let snapshot = try #require(resolver.metrics.snapshot(of: blackHole.address))
        #expect(snapshot.queries == 1)
        #expect(snapshot.failures[.timeout] == 1)
        #expect(snapshot.replies == 0)
    }
}
