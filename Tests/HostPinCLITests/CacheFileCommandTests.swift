import Foundation
import HostPinTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `--cache-file`, `--max-stale` and `--preresolve` as a user runs them: a restart begins warm, an
/// expired answer comes back marked stale when the upstream fails, a damaged file is set aside, and
/// pre-resolved names send no query at first use. Queries are counted at a fault server of each
/// test's own, relaying to the lab's NSD.
@Suite struct CacheFileCommandTests {
    let lab: Lab
    let directory: URL
    let cacheFile: String

    init() throws {
        lab = try Lab.current()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-cache-cli-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        cacheFile = directory.appendingPathComponent("cache.jsonl").path
    }

    private func lookup(_ server: FaultServer, _ arguments: String...) async throws -> ProcessRunner.Result {
        try await HostPinBinary.run(["lookup"] + arguments + ["--server", "\(server.address)", "--timeout", "1",
                                                               "--cache-file", cacheFile, "--dnssec", "off"])  // a fault server of its own
    }

    @Test func restartIsWarmAndAnExpiredAnswerComesBackStaleWhenTheUpstreamFails() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        let started = Date()
        let first = try await lookup(server, "www.example.test", "short.example.test", "--family", "4")
        #expect(first.status == 0, "\(first.standardError)")
        #expect(server.queries.count == 2)
        try await Task.sleep(for: .milliseconds(1100))  // short.example.test's TTL (1 s) runs out
        try server.setMode(.servfail)

        let second = try await lookup(server, "www.example.test", "short.example.test", "--family", "4")
        #expect(second.status == 0, "\(second.standardError)")
        // www's TTL (3600) less the whole seconds since the first run received it: at least 1 (the sleep),
        // at most the seconds both runs took.
        let most = Int(Date().timeIntervalSince(started).rounded(.up))
        let left = try #require(Self.ttl(in: second.standardOutput, line: 0))
        #expect((3600 - most)...3599 ~= left, "\(second.standardOutput)")
        #expect(second.standardOutput == """
            www.example.test. \(left) IN A 127.0.0.10
            short.example.test. 30 IN A 127.0.0.10 ; stale

            """)
        #expect(second.standardError == "")
        // The first run asked each name once (in either order); this one asked only the expired name.
        #expect(server.queries.map(\.name).sorted() == ["short.example.test", "short.example.test", "www.example.test"])

        let json = try await lookup(server, "short.example.test", "--family", "4", "--json")
        #expect(json.status == 0)
        #expect(json.standardOutput.contains(#""source":"stale""#))
        #expect(json.standardOutput.contains(#""ttl":30"#))

        let noStale = try await lookup(server, "short.example.test", "--family", "4", "--max-stale", "0")
        #expect(noStale.status == 3)
        #expect(noStale.standardOutput == "")
        #expect(noStale.standardError.contains("SERVFAIL"))
    }

    /// A cached answer prints what is left of its TTLs, as dig against a caching resolver shows, in the
    /// dig-like lines and in JSON, whose `receivedAt` stays the original answer's: an entry received 100 s
    /// before the run, TTL 3600, prints 3500 (less the seconds the runs took). Before, it printed 3600.
    @Test func cachedAnswerPrintsTheTTLThatIsLeftAndItsOriginalReceiveTime() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        try server.setMode(.servfail)  // nothing may be asked: the answers are the file's
        let before = Date().timeIntervalSince1970
        let receivedAt = before.rounded(.down) - 100
        let entry = #"{"addresses":[{"address":"127.0.0.10","ttl":3600}],"cnames":[],"family":"4","kind":"addresses","#
            + #""name":"www.example.test","receivedAt":\#(Int(receivedAt)),"upstream":"127.0.0.1:53"}"#
        let header = #"{"entries":1,"format":"hostpin-cache","savedAt":\#(Int(receivedAt)),"version":1}"#
        try Data((header + "\n" + entry + "\n").utf8).write(to: URL(fileURLWithPath: cacheFile))

        let dig = try await lookup(server, "www.example.test", "--family", "4")
        let json = try await lookup(server, "www.example.test", "--family", "4", "--json")
        let after = Date().timeIntervalSince1970
        // The age is whole seconds since receivedAt, counted when a run loads the file: between these two.
        let left = (3600 - Int((after - receivedAt).rounded(.down)))...(3600 - Int((before - receivedAt).rounded(.down)))
        #expect(left.upperBound == 3500)
        #expect(dig.status == 0, "\(dig.standardError)")
        let digTTL = try #require(Self.ttl(in: dig.standardOutput, line: 0))
        #expect(left ~= digTTL)
        #expect(dig.standardOutput == "www.example.test. \(digTTL) IN A 127.0.0.10\n")

        #expect(json.status == 0, "\(json.standardError)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        let addresses = try #require(object["addresses"] as? [[String: Any]])
        let ttl = try #require(object["ttl"] as? Int)
        #expect(left ~= ttl)
        #expect(addresses.map { $0["ttl"] as? Int } == [ttl])
        #expect(object["source"] as? String == "cache")
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        #expect(object["receivedAt"] as? String == formatter.string(from: Date(timeIntervalSince1970: receivedAt)))
        #expect(server.queries.isEmpty)
    }

    /// The TTL field of line `line` of dig-like output.
    static func ttl(in output: String, line: Int) -> Int? {
        let lines = output.split(separator: "\n")
        guard line < lines.count else { return nil }
        let fields = lines[line].split(separator: " ")
        return fields.count > 1 ? Int(fields[1]) : nil
    }

    @Test func damagedCacheFileIsReportedSetAsideAndReplaced() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        try Data("{\"not\": \"a cache\"}\n".utf8).write(to: URL(fileURLWithPath: cacheFile))
        let result = try await lookup(server, "www.example.test", "--family", "4")
        #expect(result.status == 0)
        #expect(result.standardOutput == "www.example.test. 3600 IN A 127.0.0.10\n")
        #expect(result.standardError == "hostpin: \(cacheFile): the file is not a HostPin cache file; "
                + "starting with an empty cache (the file is kept as \(cacheFile).bad)\n")
        #expect(try String(contentsOfFile: cacheFile + ".bad", encoding: .utf8) == "{\"not\": \"a cache\"}\n")
        #expect(try String(contentsOfFile: cacheFile, encoding: .utf8).hasPrefix(#"{"entries":1,"format":"hostpin-cache""#))
    }

    @Test func badCacheOptionsAreUsageErrors() async throws {
        let names = directory.appendingPathComponent("names").path
        try Data("www.example.test\n# a comment\n\nbad..name\n".utf8).write(to: URL(fileURLWithPath: names))
        let preresolve = try await HostPinBinary.run(["proxy", "--server", "\(lab.trustedDNS)", "--preresolve", names])
        #expect(preresolve.status == 2)
        #expect(preresolve.standardError.contains("line 4 of \(names): 'bad..name' is not a valid host name"))
        let stale = try await HostPinBinary.run(["lookup", "www.example.test", "--server", "\(lab.trustedDNS)",
                                                 "--max-stale", "-1"])
        #expect(stale.status == 2)
        #expect(stale.standardError.contains("invalid value for '--max-stale'"))
        for value in ["-1", "3601", "soon", "nan"] {
            let timer = try await HostPinBinary.run(["lookup", "www.example.test", "--server", "\(lab.trustedDNS)",
                                                     "--stale-answer-timeout", value])
            #expect(timer.status == 2)
            #expect(timer.standardError.contains("invalid value for '--stale-answer-timeout'"), "\(timer.standardError)")
            #expect(timer.standardError.contains("is not a number of seconds from 0 to 3600"))
        }
    }

    @Test func expiredAnswerComesStaleAfterTheStaleAnswerTimeoutNotTheBudget() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        let first = try await lookup(server, "short.example.test", "--family", "4")
        #expect(first.status == 0, "\(first.standardError)")
        try await Task.sleep(for: .milliseconds(1100))  // short.example.test's TTL (1 s) runs out
        try server.setMode(.drop)

        let started = ContinuousClock.now
        let stale = try await HostPinBinary.run(["lookup", "short.example.test", "--family", "4", "--server", "\(server.address)",
                                                 "--timeout", "20", "--stale-answer-timeout", "0.3", "--cache-file", cacheFile,
                                                 "--dnssec", "off"])
        #expect(ContinuousClock.now - started < .seconds(10), "the stale answer waited for the budget (20 s)")
        #expect(stale.status == 0, "\(stale.standardError)")
        #expect(stale.standardOutput == "short.example.test. 30 IN A 127.0.0.10 ; stale\n")
    }

    @Test func proxyPreresolvesSavesAtExitAndRestartsWarm() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        let names = directory.appendingPathComponent("names").path
        try Data("www.example.test\ncdn.example.test\n".utf8).write(to: URL(fileURLWithPath: names))
        let url = "http://www.example.test:\(lab.httpPort)/whoami"

        let proxy = try await RunningProxy(["--server", "\(server.address)", "--dnssec", "off", "--cache-file", cacheFile,
                                            "--preresolve", names, "--family", "4"])
        #expect(proxy.standardError.contains("pre-resolved 2 names\n"))
        #expect(Set(server.queries.map(\.name)) == ["www.example.test", "cdn.example.test"])
        let asked = server.queries.count
        let fetched = try await ProcessRunner.run("/usr/bin/curl", ["-sS", "--max-time", "5", "-x", "http://\(proxy.address)", url])
        #expect(fetched.standardOutput.hasPrefix("origin=www "), "\(fetched.standardError)")
        #expect(server.queries.count == asked)  // the first use sent no query
        #expect(await proxy.stop() == 0)
        let saved = try String(contentsOfFile: cacheFile, encoding: .utf8)
        #expect(saved.hasPrefix(#"{"entries":2,"format":"hostpin-cache""#))

        try server.setMode(.servfail)
        let restarted = try await RunningProxy(["--server", "\(server.address)", "--dnssec", "off", "--cache-file", cacheFile, "--family", "4"])
        let again = try await ProcessRunner.run("/usr/bin/curl", ["-sS", "--max-time", "5", "-x", "http://\(restarted.address)", url])
        #expect(again.standardOutput.hasPrefix("origin=www "), "\(again.standardError)")
        #expect(server.queries.count == asked)
        #expect(await restarted.stop() == 0)
    }
}
