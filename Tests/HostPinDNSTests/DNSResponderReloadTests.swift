import Foundation
import HostPin
import HostPinTestSupport
@testable import HostPinDNS
import Synchronization
import Testing

/// What a running stub changes in place on a reload or a flush: the rules (``DNSResponder/liveRules``)
/// and the forwarded replies it keeps (``DNSResponder/removeForwardedReplies(for:)``).
@Suite struct DNSResponderReloadTests {
    /// A forwarder that counts the questions it is asked.
    final class CountingForwarder: DNSForwarder {
        let inner: any DNSForwarder
        let count = Mutex(0)
        init(_ inner: any DNSForwarder) { self.inner = inner }

        func forward(_ question: ForwardedQuestion) async throws(ResolutionError) -> [UInt8] {
            count.withLock { $0 += 1 }
            return try await inner.forward(question)
        }
    }

    private static func ask(_ responder: DNSResponder, _ name: String, type: UInt16 = 1) async throws -> TestResponse {
        let wire = try #require(await responder.respond(to: TestMessage.query(name, type: type), over: .udp))
        return try #require(TestResponse(wire))
    }

    @Test func replacedRulesDecideTheNextQueries() async throws {
        let responder = try StubLab.responder()
        // Asked twice, so the second answer (a trusted-cache hit) is kept in the stub's answer cache too:
        // a replacement must retire it.
        for _ in 0..<2 {
            #expect(try await Self.ask(responder, "www.example.test").data(ofType: 1) == ["127.0.0.10"])
        }
        let block = try Rules(json: Data(#"{"rules": [{"action": "block", "host": "www.example.test"}]}"#.utf8),
                              relativeTo: URL(fileURLWithPath: "/"))
        responder.liveRules.replace(with: block)
        #expect(responder.rules.count == 1)
        #expect(try await Self.ask(responder, "www.example.test").rcode == 3)
        responder.liveRules.replace(with: Rules())
        #expect(try await Self.ask(responder, "www.example.test").data(ofType: 1) == ["127.0.0.10"])
    }

    @Test func flushingForwardedRepliesAsksTheUpstreamAgain() async throws {
        let (forwarding, trusted) = try StubLab.forwarding()
        let forwarder = CountingForwarder(trusted)
        let responder = DNSResponder(resolver: forwarding.resolver, forwarder: forwarder)
        let txt: UInt16 = 16
        #expect(try await Self.ask(responder, "info.example.test", type: txt).rcode == 0)
        #expect(try await Self.ask(responder, "info.example.test", type: txt).rcode == 0)
        #expect(forwarder.count.withLock { $0 } == 1)
        responder.removeForwardedReplies(for: try HostName.parse("mail.example.test"))
        _ = try await Self.ask(responder, "info.example.test", type: txt)
        #expect(forwarder.count.withLock { $0 } == 1)
        responder.removeForwardedReplies(for: try HostName.parse("INFO.example.test."))
        _ = try await Self.ask(responder, "info.example.test", type: txt)
        #expect(forwarder.count.withLock { $0 } == 2)
        responder.removeForwardedReplies()
        _ = try await Self.ask(responder, "info.example.test", type: txt)
        #expect(forwarder.count.withLock { $0 } == 3)
    }
}
