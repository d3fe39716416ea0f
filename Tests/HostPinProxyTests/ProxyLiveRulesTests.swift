import Foundation
import HostPin
import HostPinProxy
import HostPinTestSupport
import Testing

/// Rules replaced while the proxy runs (``ForwardProxy/liveRules``, a reload): the next request, plain
/// HTTP or CONNECT, is decided by the new ones.
@Suite struct ProxyLiveRulesTests {
    @Test func replacedRulesDecideTheNextRequests() async throws {
        let lab = try Lab.current()
        let httpsPort = lab.httpsPort
        let (proxy, address, _) = try ProxyLab.startProxy { $0.allowedConnectPorts.insert(httpsPort) }
        do {
            let url = ProxyLab.http(lab, "www.example.test", "/whoami")
            let before = try await ProxyLab.curl(["-x", "http://\(address)", "-w", "%{http_code}", url])
            #expect(before.standardOutput == "origin=www host=www.example.test:\(lab.httpPort)\n200")
            let block = try Rules(json: Data(#"{"rules": [{"action": "block", "host": "www.example.test"}]}"#.utf8),
                                  relativeTo: URL(fileURLWithPath: "/"))
            proxy.liveRules.replace(with: block)
            let blocked = try await ProxyLab.curl(["-x", "http://\(address)", "-w", "%{http_code}", url])
            #expect(blocked.standardOutput == "Blocked by rules[0] (block host www.example.test).\n403")
            let tunnel = try await ProxyLab.curl(["-x", "http://\(address)", "--cacert", lab.caFile,
                                                  "https://www.example.test:\(httpsPort)/whoami"])
            #expect(tunnel.status == 56, "\(tunnel.standardError)")  // curl: the proxy refused CONNECT
            proxy.liveRules.replace(with: Rules())
            let passed = try await ProxyLab.curl(["-x", "http://\(address)", "--cacert", lab.caFile,
                                                  "https://www.example.test:\(httpsPort)/whoami"])
            #expect(passed.standardOutput == "origin=www host=www.example.test:\(httpsPort)\n")
            await proxy.stop()
        } catch {
            await proxy.stop()
            throw error
        }
    }
}
