import Foundation
import HostPinTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The status page of a real `hostpin serve --watch-local` watching the lab's hijacker (dnsmasq: every
/// name under example.test is 127.0.0.66) while dig asks the stub: `/status.json` and `hostpin ctl status`
/// list the same hijacks, and headless Chromium shows them, the upstream table and the chart, with
/// JavaScript on (the page's script rebuilds the view from `/status.json`) and off (the view the service
/// rendered). It asks the hijacker on purpose: the name matches `HijackerOptIn`, the pattern
/// `scripts/test` lets reach it.
@Suite(.serialized) struct StatusPageHijackerOptInTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    /// A running serve that has found www.example.test and nx.example.test hijacked, with its metrics
    /// listener and control socket, and `/status.json` as it said so.
    private func hijackedServe(control path: String) async throws -> (ServeProcess, metrics: String, status: [String: Any]) {
        let stub = try await ServeProcess(["--dns-listen", "127.0.0.1:0", "--server", "\(lab.trustedDNS)",
                                           "--watch-local", "\(lab.hijackDNS)", "--ordinary", "127.0.0.0/8",
                                           "--metrics-listen", "127.0.0.1:0", "--control-socket", path])
        let dns = try #require(stub.dnsAddresses.first)
        let metrics = try #require(stub.metricsAddress)
        // One comparison per second: ask both names until both were compared.
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            #expect(try await ConfigFileTests.dig(dns, "+short", "www.example.test") == "127.0.0.10\n")
            #expect(try await ConfigFileTests.dig(dns, "+short", "nx.example.test") == "")
            let status = try await Self.status(metrics)
            if let findings = status["findings"] as? [String: Any], (findings["items"] as? [Any])?.count == 2 {
                return (stub, metrics, status)
            }
            try await Task.sleep(for: .milliseconds(300))
        }
        stub.kill()
        throw HeadlessChromium.Failure(description: "the watch did not find both names hijacked within 30 s: \(stub.standardError)")
    }

    private static func status(_ metrics: String) async throws -> [String: Any] {
        let reply = try await ProcessRunner.run("/usr/bin/curl", ["-s", "--max-time", "20", "http://\(metrics)/status.json"])
        return try #require(JSONSerialization.jsonObject(with: Data(reply.standardOutput.utf8)) as? [String: Any])
    }

    @Test func statusJSONAndCtlStatusListTheSameHijacksNewestFirst() async throws {
        let folder = try ConfigFileTests.folder([:])
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("control").path
        let (stub, _, status) = try await hijackedServe(control: path)
        defer { stub.kill() }
        let findings = try #require((status["findings"] as? [String: Any])?["items"] as? [[String: Any]])
        #expect(Set(findings.compactMap { $0["name"] as? String }) == ["www.example.test", "nx.example.test"])
        let times = findings.compactMap { $0["foundAt"] as? String }
        #expect(times.count == 2 && times[0] >= times[1], "newest first: \(times)")
        let byName = Dictionary(uniqueKeysWithValues: findings.map { ($0["name"] as? String ?? "", $0) })
        let codes = { (name: String) in (byName[name]?["reasons"] as? [[String: Any]])?.compactMap { $0["code"] as? String } }
        #expect(codes("www.example.test") == ["wildcard"])
        #expect(codes("nx.example.test") == ["nxdomain-rewrite", "wildcard"])
        #expect(byName["www.example.test"]?["local"] as? [String] == ["127.0.0.66"])
        #expect(byName["www.example.test"]?["trusted"] as? [String] == ["127.0.0.10"])
        #expect(byName["nx.example.test"]?["trusted"] as? String == "NXDOMAIN")
        let upstreams = try #require(status["upstreams"] as? [[String: Any]])
        #expect(upstreams.count == 1 && upstreams.first?["upstream"] as? String == "\(lab.trustedDNS)"
                    && upstreams.first?["status"] as? String == "healthy" && upstreams.first?["route"] is NSNull)
        #expect((status["answers"] as? [String: Any])?["source"] as? String == "dns")
        // The status counters exist with the endpoint on: the trusted NSD's answers for the two names,
        // validated by default, are secure (the hijacker's are only compared, never validated).
        #expect(((status["dnssec"] as? [String: Any])?["secure"]) as? Int == 2)

        // The control socket's status is the same document: the same findings, in the same order.
        let json = try await HostPinBinary.run(["ctl", "--control-socket", path, "--json", "status"])
        #expect(json.status == 0)
        let reply = try #require(JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        let ctlFindings = try #require((reply["findings"] as? [String: Any])?["items"] as? [[String: Any]])
        #expect(ctlFindings.map { NSDictionary(dictionary: $0) } == findings.map { NSDictionary(dictionary: $0) })
        #expect((reply["upstreams"] as? [[String: Any]])?.first?["upstream"] as? String == "\(lab.trustedDNS)")
        #expect((reply["listeners"] as? [String: Any])?["dns"] as? [String] == stub.dnsAddresses)

        let text = try await HostPinBinary.run(["ctl", "--control-socket", path, "status"])
        #expect(text.status == 0)
        let lines = text.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.first == "health: ok; up \(lines.first?.split(separator: " ")[3] ?? "?") s; 0 reloads", "\(text.standardOutput)")
        #expect(lines.contains { $0.hasPrefix("upstream \(lab.trustedDNS) (all names): healthy; ") })
        #expect(lines.contains("dnssec: 2 secure, 0 insecure, 0 indeterminate, 0 bogus"), "\(text.standardOutput)")  // the trusted side, validated
        #expect(lines.contains("hijacks found: 2 (newest first, the last 1000 kept)"))
        #expect(lines.contains { $0.hasPrefix("  ") && $0.contains(" www.example.test (A): local 127.0.0.66, trusted 127.0.0.10: wildcard: ") })
        #expect(lines.contains { $0.contains(" nx.example.test (A): local 127.0.0.66, trusted NXDOMAIN: nxdomain-rewrite: ") })
    }

    @Test(.enabled(if: HeadlessChromium.isInstalled, "chromium and certutil (libnss3-tools) are not installed: scripts/test installs them"))
    func chromiumShowsTheHijacksTheUpstreamsAndTheChartWithAndWithoutJavaScript() async throws {
        let folder = try ConfigFileTests.folder([:])
        defer { try? FileManager.default.removeItem(at: folder) }
        let (stub, metrics, _) = try await hijackedServe(control: folder.appendingPathComponent("control").path)
        defer { stub.kill() }
        let browser = try await HeadlessChromium(trusting: lab.caFile)
        let url = "http://\(metrics)/"
        // Nothing resolves but the listener's own address: the page names no host, so a lookup would be a
        // resource from elsewhere.
        let rules = "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"

        let page = try await browser.dumpDOM(url, proxy: nil, resolverRules: rules, extra: ["--virtual-time-budget=3000"])
        #expect(page.status == 0)
        // The script ran and rebuilt the view from /status.json.
        #expect(page.dom.contains("<body data-refreshed=\"20"), "\(page.dom)\n\(page.log.suffix(2000))")
        for dom in [page.dom] { try expectView(dom) }

        // JavaScript off: what the service rendered is the view. (Chromium's --dump-dom and --screenshot
        // themselves need JavaScript, so the page is read as it came.)
        let html = try await ProcessRunner.run("/usr/bin/curl", ["-s", "--max-time", "20", url]).standardOutput
        #expect(html.contains("<body>\n"))
        try expectView(html)

        let shot = ProcessInfo.processInfo.environment["LAB_DIR"].map { "\($0)/status-page.png" }
            ?? folder.appendingPathComponent("status-page.png").path
        let picture = try await browser.screenshot(url, to: shot, width: 1200, height: 1100, resolverRules: rules,
                                                   extra: ["--virtual-time-budget=3000"])
        #expect(picture.status == 0, "\(picture.log.suffix(2000))")
        let png = try Data(contentsOf: URL(fileURLWithPath: shot))
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
        // IHDR: width and height, big-endian, at bytes 16 and 20.
        let dimension = { (offset: Int) in png[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) } }
        #expect(png.count > 24 && dimension(16) == 1200 && dimension(20) == 1100)
        // A blank 1200 × 1100 page compresses to a few kilobytes; text, tables and the chart do not.
        #expect(png.count > 40_000, "\(png.count) bytes")
    }

    /// The hijacked names with their reasons, the upstream row, and a chart with points.
    private func expectView(_ dom: String) throws {
        #expect(dom.contains("<td>www.example.test</td><td>A</td><td>127.0.0.66</td><td>127.0.0.10</td><td>wildcard: the local resolver answers hostpin-"),
                "\(dom)")
        #expect(dom.contains("<td>nx.example.test</td><td>A</td><td>127.0.0.66</td><td>NXDOMAIN</td><td>nxdomain-rewrite: the trusted side says "
                             + "nx.example.test does not exist (NXDOMAIN)"))
        #expect(dom.contains("<tr><td>\(lab.trustedDNS)</td><td>all names</td><td>healthy</td>"))
        #expect(dom.contains("<svg id=\"chart\""))
        #expect(dom.components(separatedBy: "<circle class=\"point\"").count >= 2, "a chart with points")
    }
}

/// The status document of a real `hostpin proxy` (no stub, no watch): its requests and refusals, its
/// answers counted from the cache's lookups, and `null` for what it does not run.
@Suite struct ProxyStatusTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    @Test func aRefusedRequestIsCountedAndWhatTheProxyDoesNotRunIsNull() async throws {
        let folder = try ConfigFileTests.folder([:])
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("control").path
        let proxy = try await ServeProcess(["--listen", "127.0.0.1:0", "--server", "\(lab.trustedDNS)", "--metrics-listen", "127.0.0.1:0",
                                            "--control-socket", path], command: "proxy")
        defer { proxy.kill() }
        let address = try #require(proxy.proxyAddress)
        let metrics = try #require(proxy.metricsAddress)
        // www.example.test is 127.0.0.10: a private address, refused without --allow-private.
        let code = try await ProcessRunner.run("/usr/bin/curl", ["-s", "--max-time", "20", "-o", "/dev/null", "-w", "%{http_code}",
                                                                 "-x", "http://\(address)", "http://www.example.test:\(lab.httpPort)/whoami"])
        #expect(code.standardOutput == "403")
        let reply = try await ProcessRunner.run("/usr/bin/curl", ["-s", "--max-time", "20", "http://\(metrics)/status.json"])
        let status = try #require(JSONSerialization.jsonObject(with: Data(reply.standardOutput.utf8)) as? [String: Any])
        let counts = try #require(status["proxy"] as? [String: Any])
        #expect(counts["requests"] as? Int == 1 && counts["refusals"] as? Int == 1, "\(counts)")
        #expect(counts["byStatus"] as? [String: Int] == ["403": 1])
        let answers = try #require(status["answers"] as? [String: Any])
        #expect(answers["source"] as? String == "cache" && answers["total"] as? Int == 1, "\(answers)")
        #expect(status["dns"] is NSNull && status["watch"] is NSNull && status["findings"] is NSNull)
        let text = try await HostPinBinary.run(["ctl", "--control-socket", path, "status"])
        #expect(text.standardOutput.contains("\nproxy: 1 requests, 1 refused (403)\n"), "\(text.standardOutput)")
        #expect(!text.standardOutput.contains("hijacks found"))
    }
}
