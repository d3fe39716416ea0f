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
