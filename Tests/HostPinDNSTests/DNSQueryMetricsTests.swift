import Foundation
import HostPin
import HostPinNet
import HostPinTestSupport
@testable import HostPinDNS
import Testing

/// Every message the stub receives is counted once, under its transport, the type asked and the
/// outcome (`hostpin_dns_queries_total`), against the lab's NSD.
@Suite struct DNSQueryMetricsTests {
    /// A responder on the lab's NSD (resolving and forwarding) that counts in `metrics`.
    private static func responder(_ metrics: DNSQueryMetrics, forwarder: (any DNSForwarder)? = nil,
                                  rules: Rules = Rules()) throws -> DNSResponder {
        var configuration = try TrustedResolver.Configuration.lab([Lab.current().trustedDNS])
        configuration.budget = .seconds(20)  // room for a loaded machine: these tests count, they do not time
        let trusted = try TrustedResolver(configuration: configuration)
        return DNSResponder(resolver: CachingResolver(upstream: trusted), rules: rules, forwarder: forwarder ?? trusted,
                            metrics: metrics)
    }

    @Test func eachOutcomeIsCountedUnderItsTypeAndTransport() async throws {
        let metrics = DNSQueryMetrics()
        let rules = try Rules(json: Data(#"{"rules": [{"action": "block", "host": "ads.example.test"}]}"#.utf8),
                              relativeTo: URL(fileURLWithPath: "/"))
        let responder = try Self.responder(metrics, rules: rules)
        func ask(_ name: String, _ type: UInt16 = 1, over transport: DNSTransport = .udp, dnsClass: UInt16 = 1,
                 ednsVersion: UInt8 = 0, opcode: UInt8 = 0) async {
            _ = await responder.respond(to: TestMessage.query(name, type: type, dnsClass: dnsClass, ednsVersion: ednsVersion,
                                                              opcode: opcode), over: transport)
        }
        for _ in 0..<3 { await ask("www.example.test") }          // one miss, two hits: answered all the same
        await ask("v6only.example.test", 28, over: .tcp)           // answered
        await ask("v6only.example.test")                           // NODATA
        await ask("chain.example.test", 28)                        // NODATA after a CNAME chain
        await ask("nx.example.test")                               // NXDOMAIN
        await ask("ads.example.test", 28)                          // NXDOMAIN by a block rule
        await ask("example.test", 15)                              // MX, forwarded: answered
        await ask("nx.example.test", 16, over: .tcp)               // TXT, forwarded: NXDOMAIN
        await ask("www.example.test", 16)                          // TXT, forwarded: NODATA
        await ask("www.example.test", 255)                         // ANY: the RFC 8482 HINFO
        await ask("version.bind", 16, dnsClass: 3)                 // CHAOS: REFUSED
        await ask("example.test", 6, opcode: 4)                    // NOTIFY: NOTIMP
        await ask("www.example.test", ednsVersion: 1)              // BADVERS
        var response = TestMessage.query("www.example.test")
        response[2] |= 0x80
        _ = await responder.respond(to: response, over: .udp)      // a response: dropped
        _ = await responder.respond(to: [1, 2, 3], over: .udp)     // no header: dropped
        _ = await responder.respond(to: HostileBytes.pointerLoop, over: .tcp)  // FORMERR
        _ = await responder.respond(to: TestMessage.signedQuery("www.example.test"), over: .udp)  // TSIG: NOTAUTH

        let expected: [(DNSQueryMetrics.QueryType, DNSQueryMetrics.Outcome, DNSQueryMetrics.Transport, UInt64)] = [
            (.a, .answered, .udp, 3), (.aaaa, .answered, .tcp, 1), (.a, .nodata, .udp, 1), (.aaaa, .nodata, .udp, 1),
            (.a, .nxdomain, .udp, 1), (.aaaa, .nxdomain, .udp, 1), (.other, .answered, .udp, 2), (.other, .nxdomain, .tcp, 1),
            (.other, .nodata, .udp, 1), (.other, .refused, .udp, 1), (.other, .notimp, .udp, 1), (.a, .badvers, .udp, 1),
            (.other, .dropped, .udp, 2), (.other, .formerr, .tcp, 1),  // a dropped message's question is never read
            (.a, .notauth, .udp, 1),
        ]
        for (type, outcome, transport, count) in expected {
            #expect(metrics.count(type, outcome, over: transport) == count, "\(type) \(outcome) \(transport)")
        }
        let total = DNSQueryMetrics.Transport.allCases.flatMap { transport in
            DNSQueryMetrics.QueryType.allCases.flatMap { type in
                DNSQueryMetrics.Outcome.allCases.map { metrics.count(type, $0, over: transport) }
            }
        }.reduce(0, +)
        #expect(total == 19)  // every message once, nothing else
    }

    @Test func noTrustedAnswerIsServfail() async throws {
        let metrics = DNSQueryMetrics()
        let responder = try Self.responder(metrics, forwarder: SilentForwarder())
        _ = await responder.respond(to: TestMessage.query("example.test", type: 15), over: .udp)
        #expect(metrics.count(.other, .servfail, over: .udp) == 1)
    }

    @Test func datagramsOverTheRateLimitAreCountedRateLimited() async throws {
        let metrics = DNSQueryMetrics()
        let (server, address) = try StubLab.server(responder: try Self.responder(metrics)) {
            $0.allowRemote = true
            $0.remoteRateLimit = DNSServer.RateLimit(queriesPerSecond: 1, burst: 5)
        }
        defer { Task { await server.stop() } }
        let socket = try DatagramSocket(binding: SocketAddress("127.0.0.1:0")!)
        defer {
            socket.shutdown()
            socket.close()
        }
        for id in 0..<20 { try socket.send(TestMessage.query("www.example.test", id: UInt16(id)), to: address) }
        // Every datagram is counted once: admitted ones when answered (which a loaded machine may delay).
        var limited: UInt64 = 0
        var answered: UInt64 = 0
        for _ in 0..<400 {
            (limited, answered) = (metrics.count(.other, .rateLimited, over: .udp), metrics.count(.a, .answered, over: .udp))
            if limited + answered == 20 { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(limited + answered == 20)
        #expect((5...6).contains(answered))  // the burst, and one more if sending took over a second
        for _ in 0..<answered {
            #expect(TestResponse(try await socket.receive(deadline: .after(.seconds(10))).bytes)?.rcode == 0)
        }
    }
}
