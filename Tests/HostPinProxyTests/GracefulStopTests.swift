import Foundation
import HostPin
import HostPinProxy
import HostPinTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// ``ForwardProxy/stop(grace:)``: idle connections close at once, transfers in flight finish within the
/// grace period, the rest are cut when it ends. Durations bounded: scripts/test's timed phase.
@Suite struct GracefulStopTests {
    @Test func transferInFlightFinishesAndIdleConnectionsCloseAtOnce() async throws {
        let (proxy, address, log) = try ProxyLab.startProxy()
        let lab = try Lab.current()
        // An idle keep-alive connection, after one request.
        let idle = try #require(LoadClient.connect(address, timeout: .seconds(10)))
        defer { close(idle) }
        let whoami = ProxyLab.http(lab, "www.example.test", "/whoami")
        let first = try await ProxyResourceTests.roundTrip(idle, "GET \(whoami) HTTP/1.1\r\nHost: www.example.test\r\n\r\n",
                                                           until: "origin=www")
        #expect(first.hasPrefix("HTTP/1.1 200 OK\r\n"))
        // 30 bytes, one every 100 ms: about 3 s.
        let file = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: file) }
        let download = Task {
            try await ProxyLab.curl(["-N", "-x", "http://\(address)", "-o", file, "-w", "%{http_code} %{size_download}",
                                     ProxyLab.http(lab, "www.example.test", "/drip/30/100")])
        }
        try await Self.waitUntil(file, holds: 1)

        let started = ContinuousClock.now
        let stopping = Task { await proxy.stop(grace: .seconds(20)) }
        let idleClosed = try await TestSockets.offPool { () -> Duration in
            var byte: UInt8 = 0
            let count = recv(idle, &byte, 1, 0)  // the socket's 10 s receive timeout bounds this
            return count == 0 ? ContinuousClock.now - started : .seconds(99)
        }
        #expect(idleClosed < .seconds(1), "the idle connection was closed after \(idleClosed)")
        try await Task.sleep(for: .milliseconds(100))
        if let accepted = LoadClient.connect(address, timeout: .seconds(1)) {
            close(accepted)
            Issue.record("a new connection was accepted while stopping")
        }

        let result = try await download.value
        await stopping.value
        let stopped = ContinuousClock.now - started
        print("graceful stop: idle closed after \(idleClosed), stopped after \(stopped)")
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput == "200 30")
        #expect(stopped < .seconds(10))
        #expect((await log.waitFor(2)).map(\.status) == [200, 200])
    }

    @Test func transferLongerThanTheGraceIsCutWhenItEnds() async throws {
        let (proxy, address, _) = try ProxyLab.startProxy()
        let lab = try Lab.current()
        // 100 bytes, one every 100 ms: about 10 s.
        let file = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: file) }
        let download = Task {
            try await ProxyLab.curl(["-N", "-x", "http://\(address)", "-o", file, "-w", "%{size_download}",
                                     ProxyLab.http(lab, "www.example.test", "/drip/100/100")])
        }
        try await Self.waitUntil(file, holds: 1)
        let started = ContinuousClock.now
        await proxy.stop(grace: .seconds(1))
        let stopped = ContinuousClock.now - started
        let result = try await download.value
        print("graceful stop: a 10 s transfer cut after \(stopped)")
        #expect(stopped >= .milliseconds(950))
        #expect(stopped < .seconds(4))
        #expect(result.status == 18)  // curl: partial file
        let received = Int(result.standardOutput) ?? -1
        #expect((1..<100).contains(received), "\(received) bytes received")
    }

    /// A response whose head is sent after the stop began says `Connection: close`, and the connection
    /// closes after it.
    @Test func responseSentWhileStoppingSaysConnectionClose() async throws {
        let origin = try SlowOrigin(delay: .seconds(1))
        defer { origin.stop() }
        let (proxy, address, _) = try ProxyLab.startProxy()
        let client = try #require(LoadClient.connect(address, timeout: .seconds(10)))
        defer { close(client) }
        let reply = Task {
            try await ProxyResourceTests.roundTrip(client, "GET http://127.0.0.1:\(origin.port)/late HTTP/1.1\r\nHost: x\r\n\r\n",
                                                   until: SlowOrigin.body(for: "/late"))
        }
        while origin.heads == 0 { try await Task.sleep(for: .milliseconds(20)) }
        await proxy.stop(grace: .seconds(10))
        let response = try await reply.value
        #expect(response.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(response.contains("\r\nConnection: close\r\n"))
        var byte: UInt8 = 0
        #expect(recv(client, &byte, 1, 0) == 0)
    }

    @Test func stopWithoutGraceCutsAtOnceAndAStoppedProxyStartsAgain() async throws {
        let (proxy, address, _) = try ProxyLab.startProxy()
        let lab = try Lab.current()
        let file = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: file) }
        let download = Task {
            try await ProxyLab.curl(["-N", "-x", "http://\(address)", "-o", file, ProxyLab.http(lab, "www.example.test", "/drip/100/100")])
        }
        try await Self.waitUntil(file, holds: 1)
        let started = ContinuousClock.now
        await proxy.stop()
        #expect(ContinuousClock.now - started < .seconds(1))
        #expect(try await download.value.status == 18)
        await proxy.stop()  // idempotent

        let again = try proxy.start()
        let result = try await ProxyLab.curl(["-x", "http://\(again)", ProxyLab.http(lab, "www.example.test", "/whoami")])
        #expect(result.standardOutput == "origin=www host=www.example.test:\(lab.httpPort)\n")
        await proxy.stop()
    }

    /// A path in the temporary folder for a download.
    static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-stop-\(UUID().uuidString)").path
    }

    /// Waits until the file at `path` holds at least `count` bytes (the transfer is under way), at most 10 s.
    static func waitUntil(_ path: String, holds count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        func size() -> Int {
            var info = stat()
            return stat(path, &info) == 0 ? Int(info.st_size) : 0
        }
        while size() < count {
            guard ContinuousClock.now < deadline else { throw TestSockets.Failure(description: "no download under way at \(path)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
