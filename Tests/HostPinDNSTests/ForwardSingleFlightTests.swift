import HostPin
import HostPinNet
import HostPinTestSupport
@testable import HostPinDNS
import Testing

/// Concurrent identical forwarded questions share one upstream query (single-flight), counted at the
/// lab's counting NSD. Serialized, and kept out of the phase that runs CachingResolverTests, the other
/// suite that reads that server's query counter (scripts/test runs it with the timed suites).
@Suite(.serialized) struct ForwardSingleFlightTests {
    /// `name` with each letter's case drawn at random (DNS 0x20), so each client's question is its own.
    private static func mixedCase(_ name: String) -> String {
        String(name.map { Bool.random() ? Character($0.uppercased()) : Character($0.lowercased()) })
    }

    @Test func hundredClientsAskingTheSameMXMakeOneUpstreamQuery() async throws {
        let lab = try Lab.current()
        // The relay holds the query for 300 ms, so every client asks while the first one is out.
        let relay = try DelayingRelay(target: lab.countDNS, delay: .milliseconds(300))
        defer { relay.stop() }
        let (responder, _) = try StubLab.forwarding(through: [relay.address])
        let (server, address) = try StubLab.server(responder: responder)
        defer { Task { await server.stop() } }
        let before = try await lab.countedQueries()
        let questions = (0..<100).map { (id: UInt16(1000 + $0), name: Self.mixedCase("example.test")) }
        let responses = try await withThrowingTaskGroup(of: (UInt16, String, [UInt8]).self) { group in
            for (id, name) in questions {
                group.addTask { (id, name, try await DNSClient.udp(TestMessage.query(name, type: 15, id: id), to: address)) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let after = try await lab.countedQueries()
        #expect(responses.count == 100)
        for (id, name, wire) in responses {
            let response = try #require(TestResponse(wire))
            #expect(response.id == id)
            #expect(response.rcode == 0)
            #expect(response.questions.map(\.name) == ["\(name)."])
            // ldns compresses the exchange's name against the question, so it comes in this client's case.
            #expect(response.answers == [TestResponse.Record(owner: "\(name).", type: 15, ttl: 3600, data: "10 mail.\(name).")])
        }
        #expect(relay.received == 1)
        #expect(after - before == 1)
        #expect(responder.forwardFlights.count == 0)
    }
}
