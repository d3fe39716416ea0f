import Foundation
import HostPin
import HostPinProxy
import HostPinTestSupport
import Testing

/// The proxy's counters (``ForwardProxy/Configuration/metrics``) after real requests through it with
/// curl to the lab's origins: requests by kind and status, connections, body bytes each way.
@Suite(.serialized) struct ProxyMetricsTests {
    @Test func requestsTunnelsAndBytesAreCounted() async throws {
        let metrics = ProxyMetrics()
        try await ProxyLab.withProxy({
            $0.metrics = metrics
            $0.allowedConnectPorts.insert(ProxyLab.lab?.httpsPort ?? 0)
        }) { proxy, lab, log in
            let download = try await ProxyLab.curl(["-x", "http://\(proxy)", "-o", "/dev/null", "-w", "%{http_code}",
                                                    ProxyLab.http(lab, "www.example.test", "/bytes/100000")])
            #expect(download.standardOutput == "200")
            let upload = try await ProxyLab.curl(["-x", "http://\(proxy)", "--data-binary", String(repeating: "u", count: 5000),
                                                  ProxyLab.http(lab, "www.example.test", "/echo")])
            #expect(upload.standardOutput.hasPrefix("origin=www host=www.example.test:\(lab.httpPort) method=POST length=5000 "))
            let missing = try await ProxyLab.curl(["-x", "http://\(proxy)", "-o", "/dev/null", "-w", "%{http_code}",
                                                   ProxyLab.http(lab, "www.example.test", "/status/404")])
            #expect(missing.standardOutput == "404")
            let unresolved = try await ProxyLab.curl(["-x", "http://\(proxy)", "-o", "/dev/null", "-w", "%{http_code}",
                                                      ProxyLab.http(lab, "nx.example.test", "/")])
            #expect(unresolved.standardOutput == "502")
            let tunnel = try await ProxyLab.curl(["-x", "http://\(proxy)", "--cacert", lab.caFile,
                                                  "https://www.example.test:\(lab.httpsPort)/whoami"])
            #expect(tunnel.standardOutput == "origin=www host=www.example.test:\(lab.httpsPort)\n")
            let entries = await log.waitFor(5)  // the tunnel's line (and count) comes when it closes
            #expect(entries.count == 5)
        }
        #expect(metrics.requests(.http, status: 200) == 2)
        #expect(metrics.requests(.http, status: 404) == 1)
        #expect(metrics.requests(.http, status: 502) == 1)
        #expect(metrics.requests(.connect, status: 200) == 1)
        #expect(metrics.acceptedConnections == 5)
        #expect(metrics.openConnections == 0)  // every connection closed by the stop
        let fromOrigin = metrics.relayed(.toClient)
        let toOrigin = metrics.relayed(.toOrigin)
        // Bodies: 100 000 + the echo's line + "status=404\n", then the TLS records of the tunnel each way.
        #expect(fromOrigin > 100_000 + 11 && fromOrigin < 120_000, "\(fromOrigin)")
        #expect(toOrigin > 5000 && toOrigin < 10_000, "\(toOrigin)")  // the upload and the client's TLS records
    }
}
