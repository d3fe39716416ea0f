import Foundation
import HostPin
import HostPinProxy
import HostPinTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The `hostpin proxy` process under pressure: out of file descriptors, and under a load of 100
/// keep-alive connections. Measured on the binary (/proc/PID), so other tests running in this process
/// do not count; one at a time, so neither measures the other's load. Runs in scripts/test's phase for
/// the binaries' memory (it bounds CPU time, threads and RSS).
@Suite(.serialized) struct ProxyResourceTests {
    @Test func outOfDescriptorsTheProxyBacksOffLogsOnceAndServesItsConnections() async throws {
        let lab = try Lab.current()
        let origin = try SlowOrigin(delay: .zero)
        defer { origin.stop() }
        let proxy = try await ProxyProcess(lab: lab, extra: ["--allow-connect-port", "\(origin.port)"], descriptors: 128)
        // A tunnel opened before the descriptors run out: it must keep working through the episode.
        let tunnel = try #require(LoadClient.connect(proxy.address, timeout: .seconds(5)))
        defer { close(tunnel) }
        #expect(try await Self.roundTrip(tunnel, "CONNECT 127.0.0.1:\(origin.port) HTTP/1.1\r\nHost: x\r\n\r\n", until: "\r\n\r\n")
            .hasPrefix("HTTP/1.1 200 Connection Established\r\n"))
        #expect(try await Self.roundTrip(tunnel, "GET /before HTTP/1.1\r\nHost: x\r\n\r\n", until: SlowOrigin.body(for: "/before"))
            .hasSuffix(SlowOrigin.body(for: "/before")))

        // 300 idle connections against a limit of 128 descriptors.
        let address = proxy.address
        var idle = try await TestSockets.offPool { (0..<300).compactMap { _ in LoadClient.connect(address, timeout: .seconds(5)) } }
        defer { idle.forEach { close($0) } }
        #expect(idle.count == 300)
        try await Task.sleep(for: .seconds(1))
        let cpuBefore = try proxy.cpuTime()
        try await Task.sleep(for: .seconds(2))
        let cpu = try proxy.cpuTime() - cpuBefore
        print("descriptors: 300 idle connections, limit 128: \(cpu) of CPU in 2 s")
        #expect(cpu < .milliseconds(500), "the proxy burnt \(cpu) of CPU in 2 s while out of descriptors")
        #expect(try await Self.roundTrip(tunnel, "GET /during HTTP/1.1\r\nHost: x\r\n\r\n", until: SlowOrigin.body(for: "/during"))
            .hasSuffix(SlowOrigin.body(for: "/during")))
        let warnings = proxy.standardError.split(separator: "\n").filter { $0.contains("descriptors") }
        #expect(warnings.count == 1, "\(proxy.standardError)")

        // Once the idle clients leave, new clients are served again.
        idle.forEach { close($0) }
        idle = []
        try await Task.sleep(for: .milliseconds(500))
        let result = try await ProxyLab.curl(["-x", "http://\(proxy.address)", "--max-time", "5",
                                              "http://127.0.0.1:\(origin.port)/after"])
        #expect(result.standardOutput == SlowOrigin.body(for: "/after"), "\(result.standardError)")
        try await proxy.stop()
    }

    @Test func threadsAndMemoryStayBoundedUnderLoadAndReturnAfterIt() async throws {
        let lab = try Lab.current()
        let proxy = try await ProxyProcess(lab: lab)
        let target = "http://www.example.test:\(lab.httpPort)/whoami"
        // Warm up (resolution, the cooperative pool's threads), then settle.
        let warm = try await ProxyLab.curl(["-x", "http://\(proxy.address)", target])
        #expect(warm.status == 0, "\(warm.standardError)")
        try await Task.sleep(for: .seconds(1))
        let before = try proxy.threadsAndResidentBytes()

        let request = "GET \(target) HTTP/1.1\r\nHost: www.example.test:\(lab.httpPort)\r\n\r\n"
        var peakThreads = before.threads
        for round in 0..<2 {
            let deadline = ContinuousClock.now + .seconds(3)
            let load = Task {
                await LoadClient.run(count: 100, parallel: 100) { index in
                    let (responses, ok) = LoadClient.keepAlive(proxy: proxy.address, request: request, until: deadline)
                    return LoadClient.Outcome(index: index, ok: ok && responses > 0, duration: .zero, detail: "\(responses) responses")
                }
            }
            while ContinuousClock.now < deadline {
                peakThreads = max(peakThreads, try proxy.threadsAndResidentBytes().threads)
                try await Task.sleep(for: .milliseconds(200))
            }
            let outcomes = await load.value
            let responses = outcomes.compactMap { Int($0.detail.split(separator: " ").first ?? "") }.reduce(0, +)
            print("load round \(round): 100 connections, \(responses) responses, \(outcomes.filter { !$0.ok }.count) failed")
            #expect(outcomes.filter { !$0.ok }.isEmpty, "\(outcomes.filter { !$0.ok }.prefix(3).map(\.detail))")
        }
        try await Task.sleep(for: .seconds(3))
        let after = try proxy.threadsAndResidentBytes()
        print("threads: \(before.threads) before, \(peakThreads) at peak, \(after.threads) after; "
              + "RSS: \(before.residentBytes >> 10) KiB before, \(after.residentBytes >> 10) KiB after")
        #expect(peakThreads <= before.threads + 8)
        #expect(after.threads <= before.threads + 4)
        #expect(after.residentBytes <= before.residentBytes + 40 << 20)
        try await proxy.stop()
    }

    /// Sends `text` on a blocking socket and reads until the received bytes contain `marker`, on a
    /// thread of its own.
    static func roundTrip(_ descriptor: Int32, _ text: String, until marker: String) async throws -> String {
        try await TestSockets.offPool { try blockingRoundTrip(descriptor, text, until: marker) }
    }

    /// Sends `text` on a blocking socket and reads until the received bytes contain `marker`.
    static func blockingRoundTrip(_ descriptor: Int32, _ text: String, until marker: String) throws -> String {
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count else {
            throw ProxyProcess.Failure(description: "send failed")
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: received, as: UTF8.self).contains(marker) {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { throw ProxyProcess.Failure(description: "no '\(marker)' before the end: \(String(decoding: received, as: UTF8.self))") }
            received.append(contentsOf: buffer[..<count])
        }
        return String(decoding: received, as: UTF8.self)
    }
}
