import Foundation
import HostPin
import HostPinProxy
import HostPinTestSupport
import Testing

/// CONNECT tunnels: TLS end to end, verified by curl against the lab CA.
@Suite struct TunnelTests {
    @Test func httpsThroughConnectVerifiesTheRealCertificate() async throws {
        let lab = try Lab.current()
        try await ProxyLab.withProxy({ $0.allowedConnectPorts.insert(lab.httpsPort) }) { proxy, lab, log in
            let result = try await ProxyLab.curl(["--proxy", "http://\(proxy)", "--cacert", lab.caFile,
                                                  "https://www.example.test:\(lab.httpsPort)/whoami"])
            #expect(result.status == 0, "\(result.standardError)")
            #expect(result.standardOutput == "origin=www host=www.example.test:\(lab.httpsPort)\n")
            let entry = try #require(await log.waitFor(1).first)
            #expect(entry.method == "CONNECT")
            #expect(entry.status == 200)
            #expect(entry.pinned?.description == "127.0.0.10:\(lab.httpsPort)")
            #expect(entry.bytes > 1000)
        }
    }

    @Test func httpsThroughConnectFailsVerificationWithoutTheLabCA() async throws {
        let lab = try Lab.current()
        try await ProxyLab.withProxy({ $0.allowedConnectPorts.insert(lab.httpsPort) }) { proxy, lab, _ in
            let result = try await ProxyLab.curl(["--proxy", "http://\(proxy)", "https://www.example.test:\(lab.httpsPort)/whoami"])
            #expect(result.status == 60)
        }
    }

    /// 4 MiB through a tunnel to a client that pauses every 64 KiB: the proxy's side towards the client
    /// fills up again and again (the relay waits for buffer space, with splice or without), and every
    /// byte arrives in order, followed by the origin's end of stream.
    @Test func bulkDownloadToASlowReaderArrivesIntact() async throws {
        let size = 4 << 20
        let body = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 16) }
        let origin = try TestSockets.scriptedOrigin(response: body)
        try await ProxyLab.withProxy({ $0.allowedConnectPorts.insert(origin.port) }) { proxy, _, _ in
            let request = "CONNECT 127.0.0.1:\(origin.port) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\r\n"
                + "GET /bulk HTTP/1.1\r\nHost: inner\r\n\r\n"
            let received = try await TestSockets.offPool {
                try TestSockets.slowExchange(proxy, Array(request.utf8), pauseEvery: 64 << 10, pause: .milliseconds(10))
            }
            #expect(received.starts(with: Array("HTTP/1.1 200 Connection Established\r\n".utf8)))
            let start = LoadClient.endOfHead(received) ?? 0
            #expect(received.count - start == size)
            #expect(received[start...].elementsEqual(body))
            #expect(try await origin.request.value == "GET /bulk HTTP/1.1\r\nHost: inner\r\n\r\n")
        }
    }

    @Test func connectTunnelsPlainBytesBothWaysWithHalfClose() async throws {
        let origin = try TestSockets.scriptedOrigin(response: Array("HTTP/1.1 204 No Content\r\n\r\n".utf8))
        try await ProxyLab.withProxy({ $0.allowedConnectPorts.insert(origin.port) }) { proxy, _, _ in
            let request = "CONNECT 127.0.0.1:\(origin.port) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\r\n"
                + "GET /inside HTTP/1.1\r\nHost: inner\r\n\r\n"
            let reply = try await TestSockets.exchange(proxy, Array(request.utf8))
            #expect(reply.hasPrefix("HTTP/1.1 200 Connection Established\r\n"))
            #expect(reply.hasSuffix("\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"))
            #expect(try await origin.request.value == "GET /inside HTTP/1.1\r\nHost: inner\r\n\r\n")
        }
    }
}
