import Foundation
import HostPin
import HostPinProxy
import HostPinTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// ``ForwardProxy/Configuration/maximumConnections``: beyond it new connections get 503 at once, those
/// open are served, and a client that retries is served once a connection leaves.
@Suite struct ConnectionLimitTests {
    @Test func overTheLimitNewConnectionsGet503AndOpenOnesAreStillServed() async throws {
        let origin = try SlowOrigin(delay: .zero)
        defer { origin.stop() }
        let diagnostics = Lines()
        let configure: (inout ForwardProxy.Configuration) -> Void = { configuration in
            configuration.maximumConnections = 10
            configuration.diagnosticLog = { diagnostics.append($0) }
        }
        try await ProxyLab.withProxy(configure) { proxy, _, log in
            var open = try await TestSockets.offPool { (0..<10).compactMap { _ in LoadClient.connect(proxy, timeout: .seconds(5)) } }
            defer { open.forEach { close($0) } }
            #expect(open.count == 10)

            // The 11th and 12th connections: 503 before their requests are read, then closed.
            for index in 11...12 {
                let reply = try await TestSockets.exchange(proxy, Array("GET http://127.0.0.1:\(origin.port)/c\(index) HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
                #expect(RefusalTests.statusAndBody(reply)
                    == ("HTTP/1.1 503 Service Unavailable", "The proxy is serving its maximum of 10 connections; try again later.\n"))
                #expect(reply.contains("\r\nConnection: close\r\n"))
                #expect(reply.contains("\r\nRetry-After: 1\r\n"))
            }
            #expect(diagnostics.all
                == ["hostpin proxy: 10 connections open (the maximum): answering new ones 503 until one closes"])

            // The open connections are served as usual, twice on one of them (keep-alive).
            for path in ["/open-1", "/open-2"] {
                let reply = try await ProxyResourceTests.roundTrip(open[0], "GET http://127.0.0.1:\(origin.port)\(path) HTTP/1.1\r\nHost: x\r\n\r\n",
                                                                   until: SlowOrigin.body(for: path))
                #expect(reply.hasPrefix("HTTP/1.1 200 OK\r\n"))
            }

            // One leaves: curl, retrying after a 503 as Retry-After says, is served. `--fail`: a 503 curl got
            // before the proxy saw the close (a race the test does not control) writes no body, so only the
            // answer of the try that was served is on standard output.
            close(open.removeLast())
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", "--fail", "--retry", "3",
                                                  "http://127.0.0.1:\(origin.port)/after"])
            #expect(result.status == 0, "\(result.standardError)")
            #expect(result.standardOutput == SlowOrigin.body(for: "/after"))
            let entries = await log.waitFor(5)
            #expect(entries.filter { $0.status == 503 }.count >= 2)
            #expect(entries.filter { $0.status == 503 }.allSatisfy { $0.method == "-" && $0.target == "-" && $0.pinned == nil })
        }
        #expect(origin.requests == 3)
    }
}

/// Lines a test's proxy reported.
private final class Lines: Sendable {
    private let lines = Mutex<[String]>([])

    func append(_ line: String) { lines.withLock { $0.append(line) } }

    var all: [String] { lines.withLock { $0 } }
}
