import Foundation
import HostPinTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `hostpin serve --watch-local` watching the lab's hijacker (dnsmasq: every name under example.test is
/// 127.0.0.66) while dig asks the stub: one line per name found hijacked, whatever the number of
/// answers, and the counts at exit. It asks the hijacker on purpose: the name matches `HijackerOptIn`,
/// the pattern `scripts/test` lets reach it.
@Suite struct ServeWatchHijackerOptInTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    @Test func eachHijackedNameIsLoggedOnceAndTheVerdictsCounted() async throws {
        // The lab is all loopback: declared ordinary, so the wildcard and NXDOMAIN reasons speak alone.
        let stub = try await ServeProcess(["--dns-listen", "127.0.0.1:0", "--server", "\(lab.trustedDNS)",
                                           "--watch-local", "\(lab.hijackDNS)", "--ordinary", "127.0.0.0/8",
                                           "--metrics-listen", "127.0.0.1:0"])
        defer { stub.kill() }
        #expect(stub.standardError.hasPrefix("watching the local resolver \(lab.hijackDNS) for hijacking: at most one "
                                             + "comparison per 1 s, one per name per 3600 s; its answers are never used\n"))
        let dns = try #require(stub.dnsAddresses.first)
        // wrongcert is 127.0.0.66 in the trusted zone too: consistent. Asked first, so it is compared
        // first; www and nx follow at least a second apart each (one comparison per second).
        #expect(try await ServeWatch.dig(dns, "wrongcert.example.test") == "127.0.0.66\n")
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(30)
        var rounds = 0
        var asked = 1
        while clock.now < deadline, ServeWatch.hijackLines(stub.standardError).count < 2 || rounds < 5 {
            asked += 3
            #expect(try await ServeWatch.dig(dns, "www.example.test") == "127.0.0.10\n")
            #expect(try await ServeWatch.dig(dns, "nx.example.test") == "")
            #expect(try await ServeWatch.dig(dns, "wrongcert.example.test") == "127.0.0.66\n")
            if ServeWatch.hijackLines(stub.standardError).count == 2 { rounds += 1 }
            try await Task.sleep(for: .milliseconds(200))
        }
        // The verdicts, counted at the metrics endpoint as the summary below counts them.
        let metrics = try #require(stub.metricsAddress)
        let scrape = try await ProcessRunner.run("/usr/bin/curl", ["-s", "--max-time", "20", "http://\(metrics)/metrics"])
        let verdicts = scrape.standardOutput.split(separator: "\n").filter { $0.hasPrefix("hostpin_hijack_verdicts_total{") }
        #expect(verdicts == [#"hostpin_hijack_verdicts_total{verdict="consistent"} 1"#,
                             #"hostpin_hijack_verdicts_total{verdict="hijacked"} 2"#,
                             #"hostpin_hijack_verdicts_total{verdict="inconclusive"} 0"#], "\(scrape.standardOutput)")
        Glibc.kill(stub.pid, SIGTERM)
        #expect(try await stub.exitStatus() == 0)
        let lines = ServeWatch.hijackLines(stub.standardError).map(CompareOutput.normalised)
        let prefix = "hostpin serve: the local resolver \(lab.hijackDNS) hijacks"
        let wildcard = "wildcard: the local resolver answers hostpin-RANDOM.example.test, a random name that does not exist "
            + "(trusted side: NXDOMAIN), with 127.0.0.66 too: it answers names that do not exist"
        #expect(Set(lines) == [
            "\(prefix) www.example.test (A): local 127.0.0.66, trusted 127.0.0.10: \(wildcard)",
            "\(prefix) nx.example.test (A): local 127.0.0.66, trusted NXDOMAIN: nxdomain-rewrite: the trusted side says "
                + "nx.example.test does not exist (NXDOMAIN), the local resolver answers it with 127.0.0.66: NXDOMAIN "
                + "rewritten (typically to an ad or search page); \(wildcard)",
        ])
        #expect(lines.count == 2, "\(stub.standardError)")
        let summary = try #require(stub.standardError.split(separator: "\n").last.map(String.init))
        #expect(summary.hasPrefix("hostpin serve: watch of \(lab.hijackDNS): 3 compared (1 consistent, 2 hijacked, "
                                  + "0 inconclusive), 2 hijacked names; answers skipped: "), "\(summary)")
        // Every other answer was offered and skipped: by the limit per name or by the rate limit.
        let skipped = summary.split(separator: ":").last?.split(separator: ",")
            .compactMap { Int($0.split(separator: " ").first ?? "") } ?? []
        #expect(skipped.count == 4 && skipped[2] == 0 && skipped[3] == 0, "\(summary)")
        #expect(skipped.count == 4 && 3 + skipped[0] + skipped[1] == asked, "\(asked) asked: \(summary)")
    }
}

/// The watch's options, and the resolver it watches by default: the first nameserver of a resolv.conf of
/// the test's own, bound over /etc/resolv.conf in a private mount namespace (the host's file is never
/// touched). Nothing here sends a query to the watched resolver.
@Suite struct ServeWatchTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    /// Runs `hostpin serve arguments…` with `resolvConf` as /etc/resolv.conf, stopped by SIGTERM after
    /// `seconds` when it has not exited by then.
    private func serve(resolvConf: String, _ arguments: [String], seconds: Int = 3) async throws -> ProcessRunner.Result {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-resolv-\(UUID().uuidString).conf")
        try resolvConf.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        return try await ProcessRunner.run("/usr/bin/unshare", [
            "--mount", "sh", "-c", "mount --bind \"$0\" /etc/resolv.conf && exec timeout --preserve-status -s TERM \(seconds) \"$@\"",
            file.path, try HostPinBinary.path(), "serve", "--server", "\(lab.trustedDNS)",
        ] + arguments, environment: ["HOSTPIN_UPSTREAMS": ""])
    }

    @Test func withoutAnAddressTheFirstNameserverOfResolvConfIsWatched() async throws {
        let result = try await serve(resolvConf: "# the network's\nnameserver 127.0.0.77\nnameserver 127.0.0.78\n",
                                     ["--dns-listen", "127.0.0.1:0", "--watch-local", "--watch-interval", "0.5"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.hasPrefix("watching the local resolver 127.0.0.77:53 (the first nameserver of "
                                               + "/etc/resolv.conf) for hijacking: at most one comparison per 0.5 s, one per "
                                               + "name per 3600 s; its answers are never used\n"), "\(result.standardError)")
        #expect(result.standardError.hasSuffix("hostpin serve: watch of 127.0.0.77:53: 0 compared (0 consistent, 0 hijacked, "
                                               + "0 inconclusive), 0 hijacked names; answers skipped: 0 name compared recently, "
                                               + "0 rate limit, 0 queue full, 0 not from the trusted upstreams\n"))
    }

    @Test func aResolvConfNamingTheStubItselfIsAUsageError() async throws {
        let result = try await serve(resolvConf: "nameserver 127.0.0.153\n", ["--dns-listen", "127.0.0.153:53", "--watch-local"])
        #expect(result.status == 2)
        #expect(result.standardError.contains("'--watch-local': the first nameserver of /etc/resolv.conf, 127.0.0.153:53, is "
                                              + "this stub (--dns-listen 127.0.0.153:53): watching it would compare HostPin "
                                              + "with itself; name the network's resolver as IP:PORT"), "\(result.standardError)")
    }

    @Test func watchOptionsWithoutWatchLocalAreUsageErrors() async throws {
        for option in [["--watch-interval", "2"], ["--watch-name-interval", "60"], ["--no-probe"], ["--ordinary", "10.0.0.0/8"],
                       ["--hijack-list", "examples/hijack-list.txt"]] {
            let result = try await HostPinBinary.run(["serve", "--dns-listen", "127.0.0.1:0", "--server", "\(lab.trustedDNS)"] + option)
            #expect(result.status == 2, "\(option)")
            #expect(result.standardError.contains("\(option[0]) applies to the watch of the local resolver: add "
                                                  + "--watch-local [IP:PORT]"), "\(result.standardError)")
        }
    }

    @Test func badWatchValuesAreUsageErrors() async throws {
        for (arguments, message) in [
            (["--watch-local", "dns.example.test"], "--watch-local"),
            (["--watch-local", "127.0.0.1:53", "--watch-interval", "-1"], "'-1' is not a number of seconds from 0 to 86400"),
            (["--watch-local=127.0.0.1:53", "--watch-name-interval", "soon"], "'soon' is not a number of seconds from 0 to 86400"),
            (["--watch-local", "127.0.0.1:53", "--probe-https"], "unknown option '--probe-https'"),
        ] {
            let result = try await HostPinBinary.run(["serve", "--dns-listen", "127.0.0.1:0", "--server", "\(lab.trustedDNS)"] + arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.standardError.contains(message), "\(arguments): \(result.standardError)")
        }
    }
}

/// What the watch tests share.
enum ServeWatch {
    /// `dig +short` at the stub.
    static func dig(_ server: String, _ name: String) async throws -> String {
        let (address, port) = try #require(ServeProcess.split(server))
        return try await ProcessRunner.run("/usr/bin/dig", ["@\(address)", "-p", port, "+time=2", "+tries=1", "+short", name])
            .standardOutput
    }

    /// The lines saying a name is hijacked.
    static func hijackLines(_ standardError: String) -> [String] {
        standardError.split(separator: "\n").map(String.init).filter { $0.hasPrefix("hostpin serve: the local resolver ") }
    }
}
