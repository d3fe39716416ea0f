import Foundation
import HostPinTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// SIGHUP: `serve` and `proxy` read their configuration file again and put it in force without losing
/// the cache or the queries and transfers in flight; a bad file changes nothing.
@Suite(.serialized) struct ReloadTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    /// A configuration of the stub on a free port (and the proxy, with `proxy`), asking `servers`.
    /// `dnssec` "off" for servers of the test's own (AuthoritativeServer: an unsigned zone, no DS/DNSKEY);
    /// the lab's NSDs validate from HOSTPIN_TRUST_ANCHOR, which the lab's environment exports.
    private static func config(servers: [String], rules: String = "[]", proxy: String? = nil, extra: String = "",
                               dnssec: String = "validate") -> String {
        """
        {"upstreams": {"servers": [\(servers.map { "\"\($0)\"" }.joined(separator: ", "))]},
         "resolution": {"timeout": 2, "dnssec": "\(dnssec)"},
         "listeners": {"dns": ["127.0.0.1:0"]\(proxy.map { ", \"proxy\": \"\($0)\"" } ?? "")},
         "proxy": {"allowPrivate": true, "grace": 5},
         \(extra)
         "rules": \(rules)}
        """
    }

    private static let blockWWW = #"[{"action": "block", "host": "www.example.test"}]"#

    @Test func aChangedRuleTakesEffectAndTheCacheSurvives() async throws {
        let nsd = try await AuthoritativeServer()
        let folder = try ConfigFileTests.folder(["config.json": Self.config(servers: ["\(nsd.address)"], proxy: "127.0.0.1:0", dnssec: "off")])
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("config.json")
        let stub = try await ServeProcess(["--config", config.path], expectsProxy: true)
        defer { stub.kill() }
        let dns = try #require(stub.dnsAddresses.first)
        let proxy = try #require(stub.proxyAddress)
        #expect(try await ConfigFileTests.dig(dns, "+short", "cdn.example.test") == "127.0.0.11\n")
        #expect(try await Self.fetch(through: proxy, "http://www.example.test:\(lab.httpPort)/whoami")
                == "200 origin=www host=www.example.test:\(lab.httpPort)\n")
        let asked = try await nsd.queries()

        try Self.config(servers: ["\(nsd.address)"], rules: Self.blockWWW, proxy: "127.0.0.1:0", dnssec: "off").write(to: config, atomically: true, encoding: .utf8)
        #expect(try await stub.reload() == "hostpin: reloaded: 1 rule")
        #expect(try await ConfigFileTests.dig(dns, "www.example.test").contains("status: NXDOMAIN"))
        #expect(try await Self.fetch(through: proxy, "http://www.example.test:\(lab.httpPort)/whoami")
                == "403 Blocked by rules[0] (block host www.example.test).\n")
        // The cache survived: no query reached the upstream for the name cached before the reload.
        #expect(try await ConfigFileTests.dig(dns, "+short", "cdn.example.test") == "127.0.0.11\n")
        #expect(try await nsd.queries() == asked)
        // The same listeners: nothing moved.
        #expect(stub.standardError.components(separatedBy: "listening on").count == 3)
    }

    @Test func hostpinProxyReloadsToo() async throws {
        let folder = try ConfigFileTests.folder(["config.json": Self.config(servers: ["\(lab.trustedDNS)"], proxy: "127.0.0.1:0")])
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("config.json")
        let proxy = try await ProxyCommandProcess(["--config", config.path])
        defer { proxy.kill() }
        #expect(try await Self.fetch(through: proxy.address, "http://www.example.test:\(lab.httpPort)/whoami")
                == "200 origin=www host=www.example.test:\(lab.httpPort)\n")
        try Self.config(servers: ["\(lab.trustedDNS)"], rules: Self.blockWWW, proxy: "127.0.0.1:0").write(to: config, atomically: true, encoding: .utf8)
        Glibc.kill(proxy.pid, SIGHUP)
        try await proxy.waitForStandardError(containing: "hostpin: reloaded: 1 rule")
        #expect(try await Self.fetch(through: proxy.address, "http://www.example.test:\(lab.httpPort)/whoami")
                == "403 Blocked by rules[0] (block host www.example.test).\n")
    }

    /// Each bad file, written over a good one: the reload is refused in one line, and the stub keeps
    /// answering from its configuration — under load, without a lost query.
    static let badFiles: [(name: String, contents: @Sendable (Lab, String) -> String, line: String)] = [
        ("empty", { _, _ in "" }, "config.json is empty"),
        ("not JSON", { _, _ in "{\"rules\": [" }, "config.json is not JSON"),
        ("wrong shape", { _, _ in "[]" }, "(top level): must be an object, not an array"),
        ("unknown key", { lab, _ in config(servers: ["\(lab.trustedDNS)"], extra: #""cach": {},"#) }, "cach: unknown key"),
        ("bad upstream", { _, _ in config(servers: ["127.0.0.1:99999"]) }, "upstreams.servers[0]: '127.0.0.1:99999' has no valid port"),
        ("bad rules", { lab, _ in config(servers: ["\(lab.trustedDNS)"], rules: #"[{"action": "block"}]"#) },
         "rules[0]: the rule matches nothing"),
        ("listen address in use", { lab, inUse in
            config(servers: ["\(lab.trustedDNS)"], rules: blockWWW).replacingOccurrences(of: #"["127.0.0.1:0"]"#,
                                                                                         with: #"["127.0.0.1:0", "\#(inUse)"]"#)
        }, "cannot listen on"),
        // A folder no one may write to, root included.
        ("cache file in a read-only folder", { lab, _ in
            config(servers: ["\(lab.trustedDNS)"], rules: blockWWW, extra: #""cache": {"file": "/proc/sys/hostpin-cache.json"},"#)
        }, "cache.file: cannot use '/proc/sys/hostpin-cache.json': its folder /proc/sys is not writable"),
    ]

    @Test(arguments: badFiles.indices)
    func aBadFileLeavesTheRunningConfigurationUnderLoad(_ index: Int) async throws {
        let (_, contents, line) = Self.badFiles[index]
        let folder = try ConfigFileTests.folder(["config.json": Self.config(servers: ["\(lab.trustedDNS)"])])
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("config.json")
        let stub = try await ServeProcess(["--config", config.path])
        defer { stub.kill() }
        let dns = try #require(stub.dnsAddresses.first)
        let other = try await ServeProcess(["--dns-listen", "127.0.0.1:0", "--server", lab.trustedDNS.description])
        defer { other.kill() }
        try contents(lab, try #require(other.dnsAddresses.first)).write(to: config, atomically: true, encoding: .utf8)
        async let load = Self.load(dns, queries: 300)
        try await Task.sleep(for: .milliseconds(100))
        let reloaded = try await stub.reload()
        #expect(reloaded.hasPrefix("hostpin: reload refused, nothing changed: "), "\(reloaded)")
        #expect(reloaded.contains(line), "\(reloaded)")
        #expect(try await load == 300)
        // Still the old configuration: www is not blocked (the bad files that block it never applied).
        #expect(try await ConfigFileTests.dig(dns, "+short", "www.example.test") == "127.0.0.10\n")
        #expect(stub.standardError.split(separator: "\n").filter { $0.hasPrefix("hostpin: reload") }.count == 1)
    }

    @Test func aRulesFileThatFailsOnReloadChangesNothingUnderLoad() async throws {
        let folder = try ConfigFileTests.folder(["config.json": Self.config(servers: ["\(lab.trustedDNS)"]),
                                                 "rules.json": #"{"rules": []}"#])
        defer { try? FileManager.default.removeItem(at: folder) }
        let rules = folder.appendingPathComponent("rules.json")
        let stub = try await ServeProcess(["--config", folder.appendingPathComponent("config.json").path, "--rules", rules.path])
        defer { stub.kill() }
        let dns = try #require(stub.dnsAddresses.first)
        try #"{"rules": [{"action": "block", "host": "www.example.test"}, {"action": "redirect"}]}"#
            .write(to: rules, atomically: true, encoding: .utf8)
        async let load = Self.load(dns, queries: 300)
        try await Task.sleep(for: .milliseconds(100))
        let line = try await stub.reload()
        #expect(line.hasPrefix("hostpin: reload refused, nothing changed: "), "\(line)")
        #expect(line.contains("rules.json has 2 errors: rules[1]: the rule matches nothing"), "\(line)")
        #expect(try await load == 300)
        #expect(try await ConfigFileTests.dig(dns, "+short", "www.example.test") == "127.0.0.10\n")
    }

    @Test func scrapesDuringReloadsAreAnsweredAndShowTheUpstreamsInForce() async throws {
        let folder = try ConfigFileTests.folder(["config.json": Self.config(servers: ["\(lab.trustedDNS)"])])
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("config.json")
        let stub = try await ServeProcess(["--config", config.path, "--metrics-listen", "127.0.0.1:0"])
        defer { stub.kill() }
        let dns = try #require(stub.dnsAddresses.first)
        let metrics = try #require(stub.metricsAddress)
        async let scrapes = Self.scrape(metrics, times: 60)
        for round in 0..<10 {
            let server = round % 2 == 0 ? lab.trustedDNS2 : lab.trustedDNS
            try Self.config(servers: ["\(server)"]).write(to: config, atomically: true, encoding: .utf8)
            #expect(try await stub.reload().hasPrefix("hostpin: reloaded: 0 rules; upstreams \(server)"))
            #expect(try await ConfigFileTests.dig(dns, "+short", "www.example.test") == "127.0.0.10\n")
        }
        #expect(try await scrapes == 60)
        // The last reload put the first upstream back: the upstream metrics are its, the cache's go on.
        let scrape = try await ProcessRunner.run("/usr/bin/curl", ["-s", "--max-time", "10", "http://\(metrics)/metrics"])
        #expect(scrape.standardOutput.contains(#"hostpin_upstream_healthy{upstream="\#(lab.trustedDNS)"} 1"#), "\(scrape.standardOutput)")
        #expect(!scrape.standardOutput.contains(#"upstream="\#(lab.trustedDNS2)""#))
        #expect(scrape.standardOutput.contains("\nhostpin_cache_misses_total "))
    }

    @Test func aReloadMovesTheMetricsEndpointWhoseAddressChanged() async throws {
        let config = { (metrics: String) in Self.config(servers: ["\(self.lab.trustedDNS)"])
            .replacingOccurrences(of: #""dns": ["127.0.0.1:0"]"#, with: #""dns": ["127.0.0.1:0"], "metrics": "\#(metrics)""#) }
        let folder = try ConfigFileTests.folder(["config.json": config("127.0.0.1:0")])
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("config.json")
        let stub = try await ServeProcess(["--config", file.path])
        defer { stub.kill() }
        let endpoints = {
            stub.standardError.split(separator: "\n").filter { $0.hasSuffix(" (metrics)") }
                .compactMap { $0.split(separator: " ").dropFirst(2).first.map(String.init) }
        }
        for _ in 0..<500 where endpoints().isEmpty { try await Task.sleep(for: .milliseconds(20)) }
        let old = try #require(endpoints().first)
        try config("127.0.0.2:0").write(to: file, atomically: true, encoding: .utf8)
        #expect(try await stub.reload() == "hostpin: reloaded: 0 rules; metrics endpoint moved")
        let new = try #require(endpoints().last)
        #expect(new.hasPrefix("127.0.0.2:") && endpoints().count == 2)
        let moved = try await ProcessRunner.run("/usr/bin/curl", ["-s", "--max-time", "10", "http://\(new)/metrics"])
        #expect(moved.standardOutput.contains("\nhostpin_cache_entries "))
        let closed = try await ProcessRunner.run("/usr/bin/curl", ["-s", "--max-time", "10", "http://\(old)/metrics"])
        #expect(closed.status == 7, "curl: \(closed.status)")  // could not connect: the old address is closed
        // The same address again: nothing moves.
        #expect(try await stub.reload() == "hostpin: reloaded: 0 rules")
    }

    @Test func changedUpstreamsAnswerAfterwardsAndNoQueryFailsMeanwhile() async throws {
        let first = try await AuthoritativeServer()
        let second = try await AuthoritativeServer()
        let folder = try ConfigFileTests.folder(["config.json": Self.config(servers: ["\(first.address)"], dnssec: "off")])
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("config.json")
        let stub = try await ServeProcess(["--config", config.path])
        defer { stub.kill() }
        let dns = try #require(stub.dnsAddresses.first)
        #expect(try await ConfigFileTests.dig(dns, "+short", "mail.example.test") == "127.0.0.10\n")
        #expect(try await ConfigFileTests.dig(dns, "+short", "cdn.example.test") == "127.0.0.11\n")
        let firstBefore = try await first.queries()

        try Self.config(servers: ["\(second.address)"], dnssec: "off").write(to: config, atomically: true, encoding: .utf8)
        async let load = Self.load(dns, queries: 300)
        try await Task.sleep(for: .milliseconds(100))
        let line = try await stub.reload()
        #expect(line.hasPrefix("hostpin: reloaded: 0 rules; upstreams \(second.address) ("), "\(line)")
        #expect(try await load == 300)
        // The first upstream's answers went with it: mail, cached before, is asked again, of the second.
        let secondBefore = try await second.queries()
        #expect(try await ConfigFileTests.dig(dns, "+short", "mail.example.test") == "127.0.0.10\n")
        #expect(try await second.queries() == secondBefore + 1)
        #expect(try await first.queries() == firstBefore)
    }

    @Test func aTransferInFlightSurvivesAReloadThatMovesTheProxy() async throws {
        let folder = try ConfigFileTests.folder(["config.json": Self.config(servers: ["\(lab.trustedDNS)"], proxy: "127.0.0.1:0")])
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("config.json")
        let stub = try await ServeProcess(["--config", config.path], expectsProxy: true)
        defer { stub.kill() }
        let proxy = try #require(stub.proxyAddress)
        // 20 bytes, one every 100 ms: the transfer runs through the reload.
        async let transfer = ProcessRunner.run("/usr/bin/curl", ["-s", "--max-time", "20", "-x", "http://\(proxy)",
                                                                  "http://www.example.test:\(lab.httpPort)/drip/20/100"])
        try await Task.sleep(for: .milliseconds(500))
        try Self.config(servers: ["\(lab.trustedDNS)"], rules: Self.blockWWW, proxy: "127.0.0.2:0")
            .write(to: config, atomically: true, encoding: .utf8)
        let line = try await stub.reload()
        #expect(line.contains("the proxy moved from \(proxy)"), "\(line)")
        let result = try await transfer
        #expect(result.status == 0)
        #expect(Array(result.standardOutput.utf8) == (0..<20).map { UInt8($0 % 251) })
        let moved = try #require(stub.standardError.split(separator: "\n").last { $0.hasSuffix(" (HTTP proxy)") }
            .flatMap { $0.split(separator: " ").dropFirst(2).first.map(String.init) })
        #expect(moved.hasPrefix("127.0.0.2:"))
        #expect(try await Self.fetch(through: moved, "http://www.example.test:\(lab.httpPort)/whoami")
                == "403 Blocked by rules[0] (block host www.example.test).\n")
    }

    @Test func aHundredSignalsInARowLeaveItAnsweringWithBoundedThreads() async throws {
        let folder = try ConfigFileTests.folder(["config.json": Self.config(servers: ["\(lab.trustedDNS)"])])
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("config.json")
        let stub = try await ServeProcess(["--config", config.path])
        defer { stub.kill() }
        let dns = try #require(stub.dnsAddresses.first)
        _ = try await stub.reload()
        let threads = try stub.threads()
        // Each reload builds a new trusted resolver (the upstreams alternate): the old ones must go.
        for round in 0..<10 {
            let servers = round % 2 == 0 ? ["\(lab.trustedDNS2)"] : ["\(lab.trustedDNS)"]
            try Self.config(servers: servers).write(to: config, atomically: true, encoding: .utf8)
            #expect(try await stub.reload().hasPrefix("hostpin: reloaded: 0 rules; upstreams "))
            #expect(try await ConfigFileTests.dig(dns, "+short", "www.example.test") == "127.0.0.10\n")
        }
        // A hundred in a row, under load: every query is answered meanwhile.
        async let load = Self.load(dns, queries: 300)
        for _ in 0..<100 { Glibc.kill(stub.pid, SIGHUP) }
        #expect(try await load == 300)
        try await Task.sleep(for: .milliseconds(500))
        #expect(try await ConfigFileTests.dig(dns, "+short", "cdn.example.test") == "127.0.0.11\n")
        let reloads = stub.standardError.split(separator: "\n").filter { $0.hasPrefix("hostpin: reloaded") }.count
        #expect(reloads >= 12 && reloads <= 111, "\(reloads)")
        let after = try stub.threads()
        #expect(after <= threads + 2, "threads grew from \(threads) to \(after)")
    }

    // MARK: Helpers

    /// Scrapes `metrics` (`IP:PORT`) `times` times, one after another; returns how many were answered 200
    /// with the cache's entries in them.
    static func scrape(_ metrics: String, times: Int) async throws -> Int {
        var answered = 0
        for _ in 0..<times {
            let result = try await ProcessRunner.run("/usr/bin/curl", ["-s", "--max-time", "10", "-w", "\n%{http_code}",
                                                                        "http://\(metrics)/metrics"])
            if result.standardOutput.hasSuffix("\n200"), result.standardOutput.contains("\nhostpin_cache_entries ") { answered += 1 }
        }
        return answered
    }

    /// The status and body of `url` fetched through the proxy at `proxy` (`IP:PORT`), as `STATUS BODY`.
    static func fetch(through proxy: String, _ url: String) async throws -> String {
        let result = try await ProcessRunner.run("/usr/bin/curl", ["-s", "--max-time", "10", "-x", "http://\(proxy)",
                                                                    "-w", "%{http_code} ", "-o", "/dev/stderr", url])
        return result.standardOutput + result.standardError
    }

    /// Sends `queries` A queries for cdn.example.test to `server`, one after another (dig's batch
    /// mode), and returns how many were answered 127.0.0.11.
    static func load(_ server: String, queries: Int) async throws -> Int {
        let (address, port) = try #require(ServeProcess.split(server))
        let batch = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-load-\(UUID().uuidString)")
        try String(repeating: "@\(address) -p \(port) +short +time=5 +tries=1 cdn.example.test\n", count: queries)
            .write(to: batch, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: batch) }
        let result = try await ProcessRunner.run("/usr/bin/dig", ["-f", batch.path])
        return result.standardOutput.split(separator: "\n").filter { $0 == "127.0.0.11" }.count
    }
}

extension ServeProcess {
    /// Sends SIGHUP and returns the line the reload ends with (`hostpin: reloaded: …` or
    /// `hostpin: reload refused, …`), waiting up to 10 seconds for it.
    func reload() async throws -> String {
        let before = reloadLines.count
        Glibc.kill(pid, SIGHUP)
        for _ in 0..<500 {
            let lines = reloadLines
            if lines.count > before { return lines[before] }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw Failure(description: "no reload line within 10 s: \(standardError)")
    }

    private var reloadLines: [String] {
        standardError.split(separator: "\n").map(String.init)
            .filter { $0.hasPrefix("hostpin: reloaded") || $0.hasPrefix("hostpin: reload refused") }
    }

    /// The process's threads (`Threads` of /proc/PID/status).
    func threads() throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Threads:") }),
              let count = Int(line.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces))
        else { throw Failure(description: "no Threads in /proc/\(pid)/status") }
        return count
    }
}

/// A running `hostpin proxy` (the built binary): standard error in a file, read for `listening on`.
final class ProxyCommandProcess: Sendable {
    let pid: Int32
    /// Where it listens, `IP:PORT`.
    let address: String
    private let process: Process
    private let errorPath: String

    init(_ arguments: [String]) async throws {
        errorPath = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-proxy-\(UUID().uuidString)").path
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try HostPinBinary.path())
        process.arguments = ["proxy"] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["HOSTPIN_UPSTREAMS": ""]) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        try process.run()
        self.process = process
        pid = process.processIdentifier
        var found: String?
        for _ in 0..<500 where found == nil && process.isRunning {
            found = ((try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "").split(separator: "\n")
                .first { $0.hasPrefix("listening on ") }.map { String($0.dropFirst("listening on ".count)) }
            if found == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        guard let found else {
            if process.isRunning { Glibc.kill(pid, SIGKILL) }
            let text = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
            throw ServeProcess.Failure(description: "hostpin proxy did not start: \(text)")
        }
        address = found
    }

    var standardError: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }

    /// Waits up to 10 seconds for `text` on standard error.
    func waitForStandardError(containing text: String) async throws {
        for _ in 0..<500 {
            if standardError.contains(text) { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw ServeProcess.Failure(description: "no '\(text)' within 10 s: \(standardError)")
    }

    func kill() {
        if process.isRunning { Glibc.kill(pid, SIGKILL) }
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(atPath: errorPath)
    }
}
