import HostPin
import HostPinTestSupport
@testable import HostPinDNS
import Testing

/// The responder offers its A and AAAA answers to a ``LocalResolverWatch`` and never waits for the
/// comparison: here the watched resolver never answers at all.
@Suite struct DNSResponderWatchTests {
    @Test func answersAreOfferedAndNeverWaitForTheComparison() async throws {
        let lab = try Lab.current()
        let silent = try await FaultServer(mode: .drop, upstream: nil)
        let trusted = try TrustedResolver(configuration: .lab([lab.trustedDNS]))
        var configuration = LocalResolverWatch.Configuration()
        configuration.overallInterval = .zero
        let watch = LocalResolverWatch(local: try UntrustedResolver(server: silent.address, timeout: .seconds(30), tries: 1),
                                       trusted: trusted, configuration: configuration) { _ in }
        let responder = DNSResponder(resolver: CachingResolver(upstream: trusted), forwarder: trusted, watch: watch)

        for (name, type, expected) in [("www.example.test", UInt16(1), ["127.0.0.10"]), ("v6only.example.test", 28, ["::1"]),
                                       ("nx.example.test", 1, [])] {
            let wire = try #require(await responder.respond(to: TestMessage.query(name, type: type), over: .udp))
            #expect(try #require(TestResponse(wire)).data(ofType: type) == expected, "\(name)")
        }
        // Other types are forwarded and not offered: the watch compares addresses.
        let mx = try #require(await responder.respond(to: TestMessage.query("example.test", type: 15), over: .udp))
        #expect(try #require(TestResponse(mx)).rcode == 0)

        // Every answer went out while the first comparison still waits for the silent resolver.
        #expect(watch.statistics.queued == 3)
        #expect(watch.statistics.compared == 0)
        await watch.stop()
    }
}
