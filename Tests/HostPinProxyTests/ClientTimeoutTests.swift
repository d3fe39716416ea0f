import Foundation
import HostPin
import HostPinProxy
import HostPinTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// How long a client may hold a connection without completing a request: the head timeout (slowloris,
/// silent connections) and the idle timeout between keep-alive requests. Short timeouts so each runs in
/// a few seconds; in scripts/test's timed phase (they bound durations).
@Suite struct ClientTimeoutTests {
    /// A client sending its head one byte a second is answered 408 and closed at the head timeout,
    /// while other clients are served meanwhile. (2.5 s: half way between two bytes, so the proxy's
    /// close never crosses a byte in flight, which would turn it into a reset.)
    @Test func slowlorisIsClosedAtTheHeadTimeoutWhileOthersAreServed() async throws {
        try await ProxyLab.withProxy({ $0.requestHeadTimeout = .milliseconds(2500) }) { proxy, lab, log in
            let slow = Task { try await TestSockets.offPool { try Self.slowloris(proxy, interval: .seconds(1)) } }
            for index in 0..<4 {
                let result = try await ProxyLab.curl(["-x", "http://\(proxy)", ProxyLab.http(lab, "www.example.test", "/whoami?n=\(index)")])
                #expect(result.standardOutput == "origin=www host=www.example.test:\(lab.httpPort)\n", "\(result.standardError)")
                try await Task.sleep(for: .milliseconds(500))
            }
            let (elapsed, reply) = try await slow.value
            print("slowloris: closed after \(elapsed)")
            #expect(RefusalTests.statusAndBody(reply) == ("HTTP/1.1 408 Request Timeout", "The request head did not arrive within 2.5 s.\n"))
            #expect(elapsed >= .milliseconds(2400))
            #expect(elapsed < .seconds(6))
            let entries = await log.waitFor(5)
            #expect(entries.filter { $0.status == 408 }.count == 1)
            #expect(entries.filter { $0.status == 200 }.count == 4)
        }
    }

    /// A connection that never sends a byte is closed at the head timeout, without a response.
    @Test func silentConnectionIsClosedAtTheHeadTimeout() async throws {
        try await ProxyLab.withProxy({ $0.requestHeadTimeout = .seconds(1) }) { proxy, _, log in
            let (elapsed, reply) = try await TestSockets.offPool { try Self.waitForClose(proxy, after: "") }
            #expect(reply == "")
            #expect(elapsed >= .milliseconds(900))
            #expect(elapsed < .seconds(4))
            #expect(log.all.isEmpty)
        }
    }

    /// Between keep-alive requests the idle timeout applies, not the head timeout.
    @Test func idleKeepAliveConnectionIsClosedAtTheIdleTimeout() async throws {
        let origin = try SlowOrigin(delay: .zero)
        defer { origin.stop() }
        let configure: (inout ForwardProxy.Configuration) -> Void = {
            $0.requestHeadTimeout = .seconds(1)
            $0.idleTimeout = .seconds(3)
        }
        try await ProxyLab.withProxy(configure) { proxy, _, _ in
            let request = "GET http://127.0.0.1:\(origin.port)/first HTTP/1.1\r\nHost: x\r\n\r\n"
            let (elapsed, reply) = try await TestSockets.offPool {
                try Self.waitForClose(proxy, after: request, until: SlowOrigin.body(for: "/first"))
            }
            #expect(reply.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(elapsed >= .milliseconds(2900))
            #expect(elapsed < .seconds(6))
        }
    }

    /// Connects, sends `text`, reads until `marker`, then measures how long until the proxy closes the
    /// connection (at most 10 s); returns that time and everything received.
    static func waitForClose(_ proxy: SocketAddress, after text: String, until marker: String = "") throws -> (Duration, String) {
        guard let descriptor = LoadClient.connect(proxy, timeout: .seconds(10)) else { throw TestSockets.Failure(description: "connect failed") }
        defer { close(descriptor) }
        var received: [UInt8] = []
        if !text.isEmpty {
            received = Array(try ProxyResourceTests.blockingRoundTrip(descriptor, text, until: marker).utf8)
        }
        let started = ContinuousClock.now
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count == 0 { return (ContinuousClock.now - started, String(decoding: received, as: UTF8.self)) }
            guard count > 0 else { throw TestSockets.Failure(description: "not closed within 10 s (errno \(errno))") }
            received.append(contentsOf: buffer[..<count])
        }
    }

    /// Sends a request head one byte every `interval` until the proxy answers or closes; returns the
    /// time from connecting to the close and what was received.
    static func slowloris(_ proxy: SocketAddress, interval: Duration) throws -> (Duration, String) {
        guard let descriptor = LoadClient.connect(proxy, timeout: .seconds(10)) else { throw TestSockets.Failure(description: "connect failed") }
        defer { close(descriptor) }
        let started = ContinuousClock.now
        let head = Array("GET http://www.example.test/ HTTP/1.1\r\nHost: www.example.test\r\nX-Padding: \(String(repeating: "x", count: 100))\r\n\r\n".utf8)
        let milliseconds = Int32(interval.components.seconds * 1000 + interval.components.attoseconds / 1_000_000_000_000_000)
        for byte in head {
            var one = byte
            guard send(descriptor, &one, 1, Int32(MSG_NOSIGNAL)) == 1 else { break }  // already closed
            var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            if poll(&ready, 1, milliseconds) > 0 { break }
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received.append(contentsOf: buffer[..<count])
        }
        return (ContinuousClock.now - started, String(decoding: received, as: UTF8.self))
    }
}
