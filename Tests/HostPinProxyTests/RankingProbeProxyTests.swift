import Foundation
import HostPin
import HostPinProxy
import HostPinTestSupport
import Synchronization
import Testing

/// The proxy's background TLS probe of CONNECT targets (``RankingProbe``) with real curl and the lab's
/// nginx: `www.example.test` pinned to the fast origin (127.0.0.10), the sinkhole (127.0.0.66, whose
/// certificate is for `hijacker.invalid`) and an address that accepts and says nothing for 5 s (a
/// ``SlowHandshakeRelay`` on 127.0.0.78).
@Suite(.serialized) struct RankingProbeProxyTests {
    let fast = IPAddress("127.0.0.10")!
    let sinkhole = IPAddress("127.0.0.66")!
    let silent = IPAddress("127.0.0.78")!

    private func pin(_ addresses: [IPAddress]) throws -> Rules {
        let list = addresses.map { "\"\($0)\"" }.joined(separator: ", ")
        return try Rules(json: Data(#"{"rules": [{"action": "pin", "host": "www.example.test", "addresses": [\#(list)]}]}"#.utf8),
                         relativeTo: FileManager.default.temporaryDirectory)
    }

    @Test func connectProbeTimesVerifiedHandshakesExcludesTheSinkholeAndRanksTheSilentLast() async throws {
        let lab = try Lab.current()
        let ranking = SharedAddressRanking()
        let metrics = ProxyMetrics()
        let lines = Mutex<[String]>([])
        var probe = RankingProbe.Configuration()
        probe.caFile = lab.caFile
        probe.timeout = .seconds(1)
        let rules = try pin([fast, sinkhole, silent])
        try await SlowHandshakeRelay.with(address: "\(silent)", port: lab.httpsPort, targetAddress: "\(fast)",
                                          delay: .seconds(5)) {
            let (proxy, address, log) = try ProxyLab.startProxy { configuration in
                configuration.rules = rules
                configuration.ranking = ranking
                configuration.metrics = metrics
                configuration.probe = probe
                configuration.probedPorts = [lab.httpsPort]
                configuration.allowedConnectPorts.insert(lab.httpsPort)
                configuration.diagnosticLog = { line in lines.withLock { $0.append(line) } }
            }
            defer { Task { await proxy.stop() } }
            let url = "https://www.example.test:\(lab.httpsPort)/whoami"
            let first = try await ProxyLab.curl(["--proxy", "http://\(address)", "--cacert", lab.caFile, url])
            #expect(first.standardOutput == "origin=www host=www.example.test:\(lab.httpsPort)\n")
            // The probe: the three handshakes one after another, the silent one cut at 1 s.
            for _ in 0..<100 where ranking.snapshot.smoothedTime(to: silent, port: lab.httpsPort, at: .now) == nil {
                try await Task.sleep(for: .milliseconds(50))
            }
            let snapshot = ranking.snapshot
            let measured = try #require(snapshot.smoothedTime(to: fast, port: lab.httpsPort, at: .now))
            #expect(measured > .zero && measured < .milliseconds(500), "\(measured)")
            #expect(snapshot.smoothedTime(to: silent, port: lab.httpsPort, at: .now) == .seconds(1))
            #expect(snapshot.smoothedTime(to: sinkhole, port: lab.httpsPort, at: .now) == nil)
            #expect(snapshot.isExcluded(sinkhole, for: "www.example.test", at: .now))
            #expect(metrics.sinkholeAddresses == 1)
            let logged = lines.withLock { $0 }
            #expect(logged.count == 1)
            #expect(logged.first?.hasPrefix("hostpin proxy: 127.0.0.66:\(lab.httpsPort) is a likely sinkhole for www.example.test "
                                            + "(excluded): the upstream's certificate is for another name") == true, "\(logged)")
            #expect(ranking.attemptOrder([sinkhole, silent, fast], for: "www.example.test", port: lab.httpsPort,
                                         happyEyeballs: HappyEyeballs()) == [fast, silent])
            // A second CONNECT within the interval: not probed again (nothing more counted), and it goes to
            // the fast address with the sinkhole first in the pin rule.
            proxy.liveRules.replace(with: try pin([sinkhole, silent, fast]))
            let second = try await ProxyLab.curl(["--proxy", "http://\(address)", "--cacert", lab.caFile, url])
            #expect(second.standardOutput == "origin=www host=www.example.test:\(lab.httpsPort)\n")
            let entries = await log.waitFor(2)
            #expect(entries.map { $0.pinned?.description } == ["127.0.0.10:\(lab.httpsPort)", "127.0.0.10:\(lab.httpsPort)"])
            #expect(proxy.rankingProbe?.runningCount == 0)
            #expect(metrics.sinkholeAddresses == 1)
        }
    }

    @Test func probeIsOncePerNameAndPortWithinTheInterval() async throws {
        let lab = try Lab.current()
        var configuration = RankingProbe.Configuration()
        configuration.caFile = lab.caFile
        let ranking = SharedAddressRanking()
        let probe = RankingProbe(ranking: ranking, configuration: configuration)
        let name = try HostName.parse("www.example.test")
        let started = probe.probe(name, port: lab.httpsPort, addresses: [fast])
        #expect(started)
        #expect(!probe.probe(name, port: lab.httpsPort, addresses: [fast]))
        for _ in 0..<100 where probe.runningCount > 0 { try await Task.sleep(for: .milliseconds(20)) }
        #expect(ranking.snapshot.smoothedTime(to: fast, port: lab.httpsPort, at: .now) != nil)
        #expect(!probe.probe(name, port: lab.httpsPort, addresses: [fast]))  // done, but within the interval
        #expect(probe.probe(name, port: lab.httpPort, addresses: [fast]))     // another port is another target
        probe.forgetProbed()
        #expect(probe.probe(name, port: lab.httpsPort, addresses: [fast]))    // a network change forgets
        #expect(!probe.probe(try HostName.parse("127.0.0.10"), port: lab.httpsPort, addresses: [fast]))  // a literal: no name to check
    }
}
