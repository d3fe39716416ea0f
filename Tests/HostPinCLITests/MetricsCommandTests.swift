import Foundation
import HostPinTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `--metrics-listen` of `hostpin serve` and `hostpin proxy` as an operator's monitoring sees it:
/// exact counts after a known sequence of DNS queries (hits, misses, one upstream failure) and proxy
/// requests, `promtool check metrics` (Debian's prometheus package) accepting the scrape, `/healthz`
/// in each state, and the option's usage errors.
@Suite(.serialized) struct MetricsCommandTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    private static let promtool = "/usr/bin/promtool"

    private static func dig(_ server: String, _ arguments: String...) async throws -> String {
        let (address, port) = try #require(ServeProcess.split(server))
        return try await ProcessRunner.run("/usr/bin/dig", ["@\(address)", "-p", port, "+time=5", "+tries=1"] + arguments).standardOutput
    }

    /// `curl -s` with `arguments`: the body, or what `-w` writes.
    private static func curl(_ arguments: String...) async throws -> String {
        try await ProcessRunner.run("/usr/bin/curl", ["-s", "--max-time", "20"] + arguments).standardOutput
    }

    /// The sample lines of a scrape, without comments.
    private static func samples(_ text: String) -> Set<String> {
        Set(text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init))
    }

    /// `promtool check metrics` on `text`: its exit status and what it said.
    private static func promtoolCheck(_ text: String) async throws -> ProcessRunner.Result {
        try #require(FileManager.default.isExecutableFile(atPath: promtool),
                     "promtool is missing: install Debian's prometheus package (scripts/lab does)")
        return try await ProcessRunner.run(promtool, ["check", "metrics"], input: text)
    }

    @Test func aScrapeAfterKnownQueriesCountsEachExactlyAndPromtoolAcceptsIt() async throws {
        // The only upstream relays A and other types to the lab's NSD and answers AAAA with SERVFAIL: one
        // failure, and no probe on the side (with no healthy upstream, the held-down one is asked in the
        // foreground, and its next answer makes it healthy again), so every count is exact.
        let fault = try await FaultServer(mode: .servfailAAAA, upstream: lab.trustedDNS)
        defer { fault.stop() }
        let serve = try await ServeProcess(["--dns-listen", "127.0.0.1:0", "--listen", "127.0.0.1:0", "--allow-private", "--family", "4",
                                            "--server", fault.address.description, "--metrics-listen", "127.0.0.1:0"])
        defer { serve.kill() }
        let dns = try #require(serve.dnsAddresses.first)
        let proxy = try #require(serve.proxyAddress)
        let metrics = try #require(serve.metricsAddress)
        for _ in 0..<3 { #expect(try await Self.dig(dns, "+short", "www.example.test") == "127.0.0.10\n") }  // a miss, 2 hits
        #expect(try await Self.dig(dns, "+short", "+tcp", "www.example.test") == "127.0.0.10\n")          // a hit, over TCP
        #expect(try await Self.dig(dns, "nx.example.test").contains("status: NXDOMAIN"))                  // a miss
        #expect(try await Self.dig(dns, "nx.example.test").contains("status: NXDOMAIN"))                  // a negative hit
        #expect(try await Self.dig(dns, "AAAA", "v6only.example.test").contains("status: SERVFAIL"))      // a miss, the failure
        #expect(try await Self.dig(dns, "+short", "MX", "example.test") == "10 mail.example.test.\n")     // forwarded
        for _ in 0..<2 {
            #expect(try await Self.curl("-x", "http://\(proxy)", "http://www.example.test:\(lab.httpPort)/whoami")
                        == "origin=www host=www.example.test:\(lab.httpPort)\n")                           // cache hits
        }
        #expect(try await Self.curl("-x", "http://\(proxy)", "-o", "/dev/null", "-w", "%{http_code}",
                                    "http://www.example.test:\(lab.httpPort)/status/404") == "404")
        #expect(fault.queries.count == 4)  // www A, nx A, v6only AAAA, example.test MX

        let scrape = try await Self.curl("-D", "-", "http://\(metrics)/metrics")
        #expect(scrape.hasPrefix("HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"))
        let text = try #require(scrape.components(separatedBy: "\r\n\r\n").last)
        let samples = Self.samples(text)
        let upstream = "upstream=\"\(fault.address)\""
        for line in [
            #"hostpin_dns_queries_total{transport="udp",type="A",outcome="answered"} 3"#,
            #"hostpin_dns_queries_total{transport="tcp",type="A",outcome="answered"} 1"#,
            #"hostpin_dns_queries_total{transport="udp",type="A",outcome="nxdomain"} 2"#,
            #"hostpin_dns_queries_total{transport="udp",type="AAAA",outcome="servfail"} 1"#,
            #"hostpin_dns_queries_total{transport="udp",type="other",outcome="answered"} 1"#,
            #"hostpin_dns_queries_total{transport="udp",type="A",outcome="dropped"} 0"#,
            "hostpin_cache_hits_total 6", "hostpin_cache_negative_hits_total 1", "hostpin_cache_misses_total 3",
            "hostpin_cache_stale_served_total 0", "hostpin_cache_entries 2",
            "hostpin_upstream_queries_total{\(upstream)} 4",
            "hostpin_upstream_failures_total{\(upstream),reason=\"servfail\"} 1",
            "hostpin_upstream_failures_total{\(upstream),reason=\"timeout\"} 0",
            "hostpin_upstream_round_trip_seconds_count{\(upstream)} 4",
            "hostpin_upstream_healthy{\(upstream)} 1", "hostpin_upstream_consecutive_failures{\(upstream)} 0",
            #"hostpin_proxy_requests_total{kind="http",code="200"} 2"#,
            #"hostpin_proxy_requests_total{kind="http",code="404"} 1"#,
            "hostpin_proxy_connections_total 3", "hostpin_proxy_open_connections 0",
        ] {
            #expect(samples.contains(line), "missing \(line) in:\n\(text)")
        }
        let dnsTotal = samples.filter { $0.hasPrefix("hostpin_dns_queries_total{") }
            .compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }.reduce(0, +)
        #expect(dnsTotal == 8)  // every query once, nothing else
        let check = try await Self.promtoolCheck(text)
        #expect(check.status == 0, "promtool: \(check.standardOutput)\(check.standardError)")
        #expect(check.standardOutput.isEmpty && check.standardError.isEmpty)
    }

    @Test func theWatchsVerdictsAreCountedAndPromtoolAcceptsThem() async throws {
        // The lab's second NSD serves the same zone: the local answer is consistent.
        let stub = try await ServeProcess(["--dns-listen", "127.0.0.1:0", "--server", "\(lab.trustedDNS)", "--watch-local",
                                           "\(lab.trustedDNS2)", "--ordinary", "127.0.0.0/8", "--metrics-listen", "127.0.0.1:0"])
        defer { stub.kill() }
        let dns = try #require(stub.dnsAddresses.first)
        let metrics = try #require(stub.metricsAddress)
        #expect(try await Self.dig(dns, "+short", "www.example.test") == "127.0.0.10\n")
        var text = ""
        for _ in 0..<500 where !text.contains(#"hostpin_hijack_verdicts_total{verdict="consistent"} 1"#) {
            try await Task.sleep(for: .milliseconds(20))
            text = try await Self.curl("http://\(metrics)/metrics")
        }
        #expect(Self.samples(text).isSuperset(of: [#"hostpin_hijack_verdicts_total{verdict="consistent"} 1"#,
                                                   #"hostpin_hijack_verdicts_total{verdict="hijacked"} 0"#,
                                                   #"hostpin_hijack_verdicts_total{verdict="inconclusive"} 0"#]), "\(text)")
        let check = try await Self.promtoolCheck(text)
        #expect(check.status == 0, "promtool: \(check.standardOutput)\(check.standardError)")
    }

    @Test func healthzIsOkThen503OnceNoUpstreamIsHealthyAndWhileStopping() async throws {
        // The only upstream is a port nothing listens on: each query fails at once (port unreachable).
        let serve = try await ServeProcess(["--dns-listen", "127.0.0.1:0", "--listen", "127.0.0.1:0", "--grace", "30",
                                            "--server", SilentUpstream.closedPort, "--metrics-listen", "127.0.0.1:0"])
        defer { serve.kill() }
        let metrics = try #require(serve.metricsAddress)
        #expect(try await Self.curl("-w", " %{http_code}", "http://\(metrics)/healthz") == "ok\n 200")  // not asked yet: healthy
        let dns = try #require(serve.dnsAddresses.first)
        #expect(try await Self.dig(dns, "www.example.test").contains("status: SERVFAIL"))
        let down = try await Self.curl("-w", " %{http_code}", "http://\(metrics)/healthz")
        #expect(down.hasPrefix("no trusted upstream is healthy (\(SilentUpstream.closedPort): held down after 1 failure, "), "\(down)")
        #expect(down.hasSuffix(")\n 503"), "\(down)")
        #expect(try await Self.curl("-o", "/dev/null", "-w", "%{http_code}", "http://\(metrics)/metrics") == "200")  // still scraped

        // A request begun on the proxy holds the stop in its grace period; meanwhile healthz says why.
        let proxyAddress = try #require(serve.proxyAddress)
        let (address, port) = try #require(ServeProcess.split(proxyAddress))
        let busy = try await ServeProcess.offPool { try Self.connect(address, UInt16(port)!) }
        defer { close(busy) }
        _ = "GET http://www.example.test/ HTTP/1.1\r\n".withCString { send(busy, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        try await Task.sleep(for: .seconds(1))  // time for the proxy to see the first bytes: the connection is busy
        kill(serve.pid, SIGTERM)
        var stopping = ""
        for _ in 0..<100 {
            stopping = try await Self.curl("-w", " %{http_code}", "http://\(metrics)/healthz")
            if stopping == "stopping\n 503" { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(stopping == "stopping\n 503")
        kill(serve.pid, SIGTERM)  // a second signal cuts the grace
        #expect(try await serve.exitStatus() == 0)
    }

    /// `hostpin ctl upstreams` at `socket`: its lines.
    private static func upstreams(_ socket: String) async throws -> [String] {
        let result = try await HostPinBinary.run(["ctl", "--control-socket", socket, "upstreams"])
        #expect(result.status == 0, "\(result.standardError)")
        return result.standardOutput.split(separator: "\n").map(String.init)
    }

    @Test func namesTheUpstreamRefusesLeaveItHealthyWhileASilentOneIsHeldDown() async throws {
        let folder = try ConfigFileTests.folder([:])
        defer { try? FileManager.default.removeItem(at: folder) }
        let socket = folder.appendingPathComponent("control").path
        // The lab's fault server refuses every refused.*.fault.test name and relays the others to the trusted
        // NSD (which serves the lab root, so it denies names outside its zones with NXDOMAIN, never REFUSED).
        let fault = try #require(lab.faultDNS, "the lab has no fault server (LAB_FAULT_DNS)")
        let serve = try await ServeProcess(["--dns-listen", "127.0.0.1:0", "--server", fault.description,
                                            "--metrics-listen", "127.0.0.1:0", "--control-socket", socket])
        defer { serve.kill() }
        let dns = try #require(serve.dnsAddresses.first)
        let metrics = try #require(serve.metricsAddress)
        // Each of these is SERVFAIL for the client, and an answer about one name, not an outage, for the health.
        for number in 1...8 {
            #expect(try await Self.dig(dns, "refused.bad\(number).fault.test").contains("status: SERVFAIL"))
        }
        #expect(try await Self.upstreams(socket) == ["\(fault) healthy"])
        #expect(try await Self.curl("-w", " %{http_code}", "http://\(metrics)/healthz") == "ok\n 200")
        let scrape = Self.samples(try await Self.curl("http://\(metrics)/metrics"))
        let upstream = "upstream=\"\(fault)\""
        #expect(scrape.contains("hostpin_upstream_healthy{\(upstream)} 1"))
        #expect(scrape.contains("hostpin_upstream_failures_total{\(upstream),reason=\"refused\"} 8"), "\(scrape)")
        #expect(try await Self.dig(dns, "+short", "cdn.example.test") == "127.0.0.11\n")  // and it relays the rest

        // A UDP port that never answers: held down after one query, /healthz 503.
        try await SilentUpstream.with { silent in
            let quiet = try await ServeProcess(["--dns-listen", "127.0.0.1:0", "--server", silent, "--timeout", "2",
                                                "--metrics-listen", "127.0.0.1:0", "--control-socket", socket + "2"])
            defer { quiet.kill() }
            let quietDNS = try #require(quiet.dnsAddresses.first)
            let quietMetrics = try #require(quiet.metricsAddress)
            #expect(try await Self.dig(quietDNS, "www.example.test").contains("status: SERVFAIL"))
            let lines = try await Self.upstreams(socket + "2")
            #expect(lines.count == 1 && lines.first?.hasPrefix("\(silent) held down after 1 failure, ") == true, "\(lines)")
            let down = try await Self.curl("-w", " %{http_code}", "http://\(quietMetrics)/healthz")
            #expect(down.hasPrefix("no trusted upstream is healthy (\(silent): held down after 1 failure, "), "\(down)")
            #expect(down.hasSuffix(")\n 503"), "\(down)")
        }
    }

    @Test func theProxyCommandServesItsOwnMetrics() async throws {
        let proxy = try await ServeProcess(["--listen", "127.0.0.1:0", "--allow-private", "--server", lab.trustedDNS.description,
                                            "--metrics-listen", "127.0.0.1:0"], command: "proxy")
        defer { proxy.kill() }
        let address = try #require(proxy.proxyAddress)
        #expect(try await Self.curl("-x", "http://\(address)", "http://www.example.test:\(lab.httpPort)/whoami")
                    == "origin=www host=www.example.test:\(lab.httpPort)\n")
        let metrics = try #require(proxy.metricsAddress)
        let text = try await Self.curl("http://\(metrics)/metrics")
        let samples = Self.samples(text)
        #expect(samples.contains(#"hostpin_proxy_requests_total{kind="http",code="200"} 1"#), "\(text)")
        #expect(samples.contains("hostpin_cache_misses_total 1"))
        #expect(samples.contains("hostpin_upstream_queries_total{upstream=\"\(lab.trustedDNS)\"} 2"))  // A and AAAA
        #expect(!text.contains("hostpin_dns_queries_total"))  // no stub in this command
        let check = try await Self.promtoolCheck(text)
        #expect(check.status == 0, "promtool: \(check.standardOutput)\(check.standardError)")
        kill(proxy.pid, SIGTERM)
        #expect(try await proxy.exitStatus() == 0)
    }

    @Test(arguments: ["serve", "proxy"])
    func aRemoteMetricsAddressNeedsAllowRemote(_ command: String) async throws {
        let result = try await HostPinBinary.run([command, "--server", lab.trustedDNS.description, "--metrics-listen", "192.0.2.1:9100"])
        #expect(result.status == 2)
        #expect(result.standardError == "hostpin: error: invalid value for '--metrics-listen': 192.0.2.1:9100 is not a loopback "
                    + "address; add --allow-remote to let other hosts read the metrics.\nSee 'hostpin \(command) --help'.\n")
        let bad = try await HostPinBinary.run([command, "--server", lab.trustedDNS.description, "--metrics-listen", "9100"])
        #expect(bad.status == 2)
        #expect(bad.standardError == "hostpin: error: invalid value for '--metrics-listen': '9100' is not IP:PORT (IPv6 as [IP]:PORT).\n"
                    + "See 'hostpin \(command) --help'.\n")
    }

    @Test func aMetricsAddressInUseStopsTheServiceWithExit1() async throws {
        let first = try await ServeProcess(["--dns-listen", "127.0.0.1:0", "--server", lab.trustedDNS.description,
                                            "--metrics-listen", "127.0.0.1:0"])
        defer { first.kill() }
        let taken = try #require(first.metricsAddress)
        let second = try await HostPinBinary.run(["serve", "--dns-listen", "127.0.0.1:0", "--server", lab.trustedDNS.description,
                                                  "--metrics-listen", taken])
        #expect(second.status == 1)
        #expect(second.standardError.contains("hostpin: --metrics-listen: cannot listen on \(taken): "), "\(second.standardError)")
    }

    /// A blocking TCP connection to `address:port` (run off the pool).
    private static func connect(_ address: String, _ port: UInt16) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var target = sockaddr_in()
        target.sin_family = sa_family_t(AF_INET)
        target.sin_port = port.bigEndian
        target.sin_addr.s_addr = inet_addr(address)
        let status = withUnsafePointer(to: &target) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard status == 0 else {
            close(descriptor)
            throw ServeProcess.Failure(description: "connect to \(address):\(port) failed")
        }
        return descriptor
    }
}
