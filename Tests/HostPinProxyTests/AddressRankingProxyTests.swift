import Foundation
import HostPin
import HostPinProxy
import HostPinTestSupport
import Testing

/// The proxy's address ranking with real curl and the lab's nginx origins: the race's winner is timed
/// for plain-HTTP origins (never for CONNECT, whose TLS the proxy does not see), and a name's addresses
/// are attempted in ranked order, without those excluded for it.
@Suite struct AddressRankingProxyTests {
    let www = IPAddress("127.0.0.10")!
    let cdn = IPAddress("127.0.0.11")!

    private func pin(_ addresses: String) throws -> Rules {
        try Rules(json: Data(#"{"rules": [{"action": "pin", "host": "www.example.test", "addresses": [\#(addresses)]}]}"#.utf8),
                  relativeTo: FileManager.default.temporaryDirectory)
    }

    @Test func plainHTTPRecordsTheWinningAttemptsConnectTime() async throws {
        let ranking = SharedAddressRanking()
        try await ProxyLab.withProxy({ configuration in
            configuration.ranking = ranking
            configuration.probe = nil  // the race's own measure alone (the probe's: the next test)
        }) { proxy, lab, log in
            // multi.example.test: 127.0.0.12 refuses, 127.0.0.10 wins.
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", ProxyLab.http(lab, "multi.example.test", "/whoami")])
            #expect(result.standardOutput == "origin=www host=multi.example.test:\(lab.httpPort)\n")
            _ = await log.waitFor(1)
            let measured = try #require(ranking.snapshot.smoothedTime(to: www, port: lab.httpPort, at: .now))
            #expect(measured > .zero && measured < .seconds(1))
            #expect(ranking.snapshot.smoothedTime(to: IPAddress("127.0.0.12")!, port: lab.httpPort, at: .now) == nil)
            #expect(ranking.snapshot.measuredCount == 1)
        }
    }

    /// The race measures only its winner: 127.0.0.11 measured slow (100 ms, as if once) would stay ahead
    /// of 127.0.0.10, never tried. The proxy's TCP probe times a connection to each, and the next request
    /// goes to the faster one.
    @Test func plainHTTPTargetWithAnUnmeasuredAddressIsProbed() async throws {
        let ranking = SharedAddressRanking()
        let rules = try pin(#""127.0.0.11", "127.0.0.10""#)
        try await ProxyLab.withProxy({ configuration in
            configuration.rules = rules
            configuration.ranking = ranking
        }) { proxy, lab, log in
            ranking.record(.milliseconds(100), to: cdn, port: lab.httpPort)
            let first = try await ProxyLab.curl(["-x", "http://\(proxy)", ProxyLab.http(lab, "www.example.test", "/whoami")])
            #expect(first.standardOutput == "origin=cdn host=www.example.test:\(lab.httpPort)\n")
            for _ in 0..<100 where ranking.snapshot.smoothedTime(to: www, port: lab.httpPort, at: .now) == nil {
                try await Task.sleep(for: .milliseconds(20))
            }
            let fast = try #require(ranking.snapshot.smoothedTime(to: www, port: lab.httpPort, at: .now))
            #expect(fast < .milliseconds(50), "\(fast)")
            let second = try await ProxyLab.curl(["-x", "http://\(proxy)", ProxyLab.http(lab, "www.example.test", "/whoami")])
            #expect(second.standardOutput == "origin=www host=www.example.test:\(lab.httpPort)\n")
            #expect((await log.waitFor(2)).map { $0.pinned?.description } == ["127.0.0.11:\(lab.httpPort)", "127.0.0.10:\(lab.httpPort)"])
        }
    }

    @Test func fasterMeasuredAddressIsAttemptedBeforeTheAnswersFirst() async throws {
        let rules = try pin(#""127.0.0.11", "127.0.0.10""#)
        try await ProxyLab.withProxy({ $0.rules = rules }) { proxy, lab, _ in
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", ProxyLab.http(lab, "www.example.test", "/whoami")])
            #expect(result.standardOutput == "origin=cdn host=www.example.test:\(lab.httpPort)\n")
        }
        let ranking = SharedAddressRanking()
        try await ProxyLab.withProxy({ configuration in
            configuration.rules = rules
            configuration.ranking = ranking
        }) { proxy, lab, log in
            ranking.record(.milliseconds(50), to: cdn, port: lab.httpPort)
            ranking.record(.milliseconds(1), to: www, port: lab.httpPort)
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", ProxyLab.http(lab, "www.example.test", "/whoami")])
            #expect(result.standardOutput == "origin=www host=www.example.test:\(lab.httpPort)\n")
            #expect((await log.waitFor(1)).first?.pinned?.description == "127.0.0.10:\(lab.httpPort)")
        }
    }

    @Test func addressExcludedForTheNameIsNotAttempted() async throws {
        let ranking = SharedAddressRanking()
        let rules = try pin(#""127.0.0.66", "127.0.0.10""#)
        ranking.exclude(IPAddress("127.0.0.66")!, for: "www.example.test")
        try await ProxyLab.withProxy({ configuration in
            configuration.rules = rules
            configuration.ranking = ranking
        }) { proxy, lab, log in
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", ProxyLab.http(lab, "www.example.test", "/whoami")])
            #expect(result.standardOutput == "origin=www host=www.example.test:\(lab.httpPort)\n")
            #expect((await log.waitFor(1)).first?.pinned?.description == "127.0.0.10:\(lab.httpPort)")
        }
    }

    @Test func connectTunnelRecordsNoTime() async throws {
        let ranking = SharedAddressRanking()
        let lab = try Lab.current()
        try await ProxyLab.withProxy({ configuration in
            configuration.allowedConnectPorts.insert(lab.httpsPort)
            configuration.ranking = ranking
        }) { proxy, lab, log in
            let result = try await ProxyLab.curl(["--proxy", "http://\(proxy)", "--cacert", lab.caFile,
                                                  "https://www.example.test:\(lab.httpsPort)/whoami"])
            #expect(result.standardOutput == "origin=www host=www.example.test:\(lab.httpsPort)\n")
            _ = await log.waitFor(1)
            #expect(ranking.snapshot.measuredCount == 0)
        }
    }
}
