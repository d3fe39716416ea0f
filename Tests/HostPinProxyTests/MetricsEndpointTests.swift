import HostPin
import HostPinNet
@testable import HostPinProxy
import HostPinTestSupport
import Testing

/// The metrics endpoint on real sockets: scrapes, keep-alive, the health check, refusals of bad, huge
/// and slow requests (none of which holds the others up), the connection limit, and a burst of 200
/// parallel scrapes. Clients are non-blocking sockets on the event loop, so 200 of them cost no threads.
@Suite(.serialized) struct MetricsEndpointTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    /// A running endpoint on `127.0.0.1:0` for a service resolving through the lab's NSD.
    private func endpoint(_ configure: (inout MetricsEndpoint.Configuration) -> Void = { _ in }) throws
        -> (MetricsEndpoint, SocketAddress)
    {
        let trusted = try TrustedResolver(configuration: .lab([lab.trustedDNS]))
        var configuration = MetricsEndpoint.Configuration(listenAddress: SocketAddress("127.0.0.1:0")!)
        configure(&configuration)
        let endpoint = MetricsEndpoint(configuration: configuration,
                                       metrics: ServiceMetrics(resolver: trusted, cache: ResolutionCache(), dns: DNSQueryMetrics()))
        return (endpoint, try endpoint.start())
    }

    /// Connects, sends `request` (in `pieces`, `pause` apart), and returns what comes back until the
    /// endpoint closes, within `timeout`.
    static func exchange(_ address: SocketAddress, _ request: String, timeout: Duration = .seconds(20)) async throws -> String {
        let deadline = ContinuousClock.Instant.after(timeout)
        let channel = try await SocketChannel.connect(to: address, deadline: deadline)
        defer { channel.close() }
        try await channel.write(Array(request.utf8), deadline: deadline)
        var received: [UInt8] = []
        while true {
            let bytes = try await channel.read(deadline: deadline)
            if bytes.isEmpty { return String(decoding: received, as: UTF8.self) }
            received.append(contentsOf: bytes)
        }
    }

    private static let scrape = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"

    @Test func aScrapeIsTheExpositionAndKeepAliveServesTheNextRequest() async throws {
        let (endpoint, address) = try endpoint()
        defer { Task { await endpoint.stop() } }
        let reply = try await Self.exchange(address, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                                            + "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        let parts = reply.components(separatedBy: "HTTP/1.1 ")
        #expect(parts.count == 3, "\(reply)")  // two responses on one connection, the first kept alive
        #expect(parts[1].hasPrefix("200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"))
        #expect(!parts[1].contains("Connection: close"))
        #expect(parts[1].contains("\r\n\r\n# HELP hostpin_dns_queries_total "))
        let body = try #require(parts[1].components(separatedBy: "\r\n\r\n").last)
        #expect(parts[1].contains("Content-Length: \(body.utf8.count)\r\n"))
        #expect(parts[2] == "200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 3\r\nCache-Control: no-store\r\n"
                    + "X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\nok\n")
    }

    @Test func headGivesTheLengthWithoutTheBody() async throws {
        let (endpoint, address) = try endpoint()
        defer { Task { await endpoint.stop() } }
        let reply = try await Self.exchange(address, "HEAD /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(reply == "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 3\r\n"
                    + "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n")
    }

    @Test func otherPathsAre404AndOtherMethods405() async throws {
        let (endpoint, address) = try endpoint()
        defer { Task { await endpoint.stop() } }
        let notFound = try await Self.exchange(address, "GET /debug/pprof HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(notFound.hasPrefix("HTTP/1.1 404 Not Found\r\n"))
        #expect(notFound.hasSuffix("\r\n\r\nNot found: /debug/pprof (the endpoint serves /metrics, /healthz, /, /status.json).\n"))
        let post = try await Self.exchange(address, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
        #expect(post.hasPrefix("HTTP/1.1 405 Method Not Allowed\r\n"))
        #expect(post.contains("\r\nAllow: GET, HEAD\r\n"))
        #expect(post.hasSuffix("\r\n\r\nMethod POST is not allowed: use GET or HEAD.\n"))
    }

    @Test func malformedAndHugeHeadsAreRefusedWithTheirStatus() async throws {
        let (endpoint, address) = try endpoint()
        defer { Task { await endpoint.stop() } }
        let bareLF = try await Self.exchange(address, "GET /metrics HTTP/1.1\nHost: x\n\n")
        #expect(bareLF.hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
        #expect(bareLF.hasSuffix("\r\n\r\nBad request: a line ends in a bare LF instead of CRLF.\n"))
        let noHost = try await Self.exchange(address, "GET /metrics HTTP/1.1\r\n\r\n")
        #expect(noHost.hasSuffix("Bad request: an HTTP/1.1 request has no Host field.\n"))
        let version = try await Self.exchange(address, "GET /metrics HTTP/2.0\r\nHost: x\r\n\r\n")
        #expect(version.hasPrefix("HTTP/1.1 505 HTTP Version Not Supported\r\n"))
        // 20 000 bytes of one field: refused once the line passes 4 KiB, without waiting for its end.
        let huge = try await Self.exchange(address, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Pad: " + String(repeating: "a", count: 20_000))
        #expect(huge.hasPrefix("HTTP/1.1 431 Request Header Fields Too Large\r\n"))
        #expect(huge.hasSuffix("Bad request: a field line is longer than 4096 bytes.\n"))
        let many = try await Self.exchange(address, "GET /metrics HTTP/1.1\r\nHost: x\r\n"
                                           + String(repeating: "X-A: b\r\n", count: 40) + "\r\n")
        #expect(many.hasSuffix("Bad request: the head has more than 32 field lines.\n"))
        let long = try await Self.exchange(address, "GET /" + String(repeating: "m", count: 5000) + " HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(long.hasPrefix("HTTP/1.1 414 URI Too Long\r\n"))
        #expect(try await Self.exchange(address, Self.scrape).hasPrefix("HTTP/1.1 200 OK\r\n"))  // still serving
    }

    @Test func aSlowClientGets408AndDoesNotHoldUpOtherScrapes() async throws {
        let (endpoint, address) = try endpoint { $0.requestHeadTimeout = .seconds(2) }
        defer { Task { await endpoint.stop() } }
        let started = ContinuousClock.now
        async let slow = Self.exchange(address, "GET /metrics HTTP/1.1\r\nHost:")  // never finished
        async let silent = Self.exchange(address, "")  // connects and sends nothing
        for _ in 0..<5 {
            #expect(try await Self.exchange(address, Self.scrape).hasPrefix("HTTP/1.1 200 OK\r\n"))
        }
        let refused = try await slow
        #expect(refused.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"))
        #expect(refused.hasSuffix("\r\n\r\nThe request head was not complete within 2 s.\n"))
        #expect(try await silent == "")  // closed without a word
        #expect(ContinuousClock.now - started >= .seconds(2))
    }

    @Test func twoHundredParallelScrapesAreAllAnswered() async throws {
        let (endpoint, address) = try endpoint()
        defer { Task { await endpoint.stop() } }
        let replies = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<200 { group.addTask { try await Self.exchange(address, Self.scrape, timeout: .seconds(60)) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(replies.count == 200)
        #expect(replies.allSatisfy { $0.hasPrefix("HTTP/1.1 200 OK\r\n") && $0.hasSuffix("\n") && $0.contains("hostpin_cache_entries 0\n") })
    }

    @Test func connectionsBeyondTheLimitAre503() async throws {
        let (endpoint, address) = try endpoint { $0.maximumConnections = 2 }
        defer { Task { await endpoint.stop() } }
        let deadline = ContinuousClock.Instant.after(.seconds(20))
        let first = try await SocketChannel.connect(to: address, deadline: deadline)
        defer { first.close() }
        let second = try await SocketChannel.connect(to: address, deadline: deadline)
        defer { second.close() }
        try await first.write(Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8), deadline: deadline)
        #expect(String(decoding: try await first.read(deadline: deadline), as: UTF8.self).hasSuffix("\r\n\r\nok\n"))  // admitted
        let third = try await Self.exchange(address, Self.scrape)
        #expect(third.hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"))
        #expect(third.contains("\r\nRetry-After: 1\r\n"))
        #expect(third.hasSuffix("Too many connections to the metrics endpoint (at most 2); try again.\n"))
        first.close()
        second.close()
        var answered = ""
        for _ in 0..<100 {  // the slots free once the endpoint has seen the two closes
            answered = try await Self.exchange(address, Self.scrape)
            if answered.hasPrefix("HTTP/1.1 200 OK\r\n") { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(answered.hasPrefix("HTTP/1.1 200 OK\r\n"))
    }

    @Test func stopClosesIdleConnectionsAndFreesThePort() async throws {
        let (endpoint, address) = try endpoint()
        let deadline = ContinuousClock.Instant.after(.seconds(20))
        let idle = try await SocketChannel.connect(to: address, deadline: deadline)
        defer { idle.close() }
        try await idle.write(Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8), deadline: deadline)
        _ = try await idle.read(deadline: deadline)
        await endpoint.stop()
        #expect(try await idle.read(deadline: deadline).isEmpty)  // closed by the stop
        await #expect(throws: SocketError.self) { try await SocketChannel.connect(to: address, deadline: deadline) }
    }

    @Test func aRemoteAddressNeedsAllowRemote() throws {
        let trusted = try TrustedResolver(configuration: .lab([lab.trustedDNS]))
        let endpoint = MetricsEndpoint(configuration: .init(listenAddress: SocketAddress("0.0.0.0:0")!),
                                       metrics: ServiceMetrics(resolver: trusted, cache: ResolutionCache()))
        #expect(throws: ListenError.remoteNotAllowed(SocketAddress("0.0.0.0:0")!)) { try endpoint.start() }
    }
}
