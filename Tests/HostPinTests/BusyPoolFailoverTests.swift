@testable import HostPin
import HostPinTestSupport
import Synchronization
import Testing

/// Failover while the caller's task cannot run: the budget is 1 s and every job of the resolving task
/// after its first waits 2 s (``HoldingExecutor``), as on a cooperative pool kept busy by other work. The
/// first upstream's SERVFAIL comes in milliseconds, and the next upstream must be asked then, not when the
/// task next runs: the answer is the second upstream's, never a timeout. (Seen in the main phase of
/// scripts/test: the SERVFAIL read at +5 ms, the task resumed at +11 s, the budget expired at +5 s, and the
/// lab's NSD, never asked, reported as timed out.)
@Suite struct BusyPoolFailoverTests {
    let lab: Lab

    init() throws {
        lab = try Lab.current()
    }

    private func resolver(_ upstreams: [Upstream]) throws -> TrustedResolver {
        // Fault servers of the test's own, which cannot answer DS/DNSKEY: DNSSEC off.
        var configuration = TrustedResolver.Configuration.ownServer(upstreams)
        configuration.budget = .seconds(1)
        return try TrustedResolver(configuration: configuration, clock: ManualClock())
    }

    @Test func theNextUpstreamAnswersThoughTheTaskWaitsPastTheBudget() async throws {
        let failing = try await FaultServer(mode: .servfail, upstream: nil)
        let resolver = try resolver([failing.address, lab.trustedDNS])
        let result = await Task(executorPreference: HoldingExecutor(holding: .seconds(2))) {
            try await resolver.resolve("www.example.test", family: .v4)
        }.result
        let resolution = try result.get()
        #expect(resolution.upstream == lab.trustedDNS)
        #expect(resolution.ipAddresses.map(\.description) == ["127.0.0.10"])
        // One name's SERVFAIL moves the query on but leaves the upstream healthy (UpstreamHealth's 10-names rule).
        #expect(resolver.health.status(of: failing.address) == .healthy)
    }

    @Test func aForwardedQuestionIsAnsweredByTheNextUpstreamThoughTheTaskWaits() async throws {
        let failing = try await FaultServer(mode: .servfail, upstream: nil)
        let resolver = try resolver([failing.address, lab.trustedDNS])
        let question = try #require(ForwardedQuestion(name: "info.example.test", type: 16))
        let result = await Task(executorPreference: HoldingExecutor(holding: .seconds(2))) {
            try await resolver.forward(question)
        }.result
        let reply = try result.get()
        // NOERROR, one answer record: the zone's TXT ("hostpin lab" "forwarded").
        #expect(reply.count > 12 && reply[3] & 0x0F == 0 && reply[6] == 0 && reply[7] == 1)
        #expect(String(decoding: reply, as: UTF8.self).contains("hostpin lab"))
    }
}
