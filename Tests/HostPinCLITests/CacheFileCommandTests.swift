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
                                                               "--cache-file", cacheFile])
    }

    @Test func restartIsWarmAndAnExpiredAnswerComesBackStaleWhenTheUpstreamFails() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        let first = try await lookup(server, "www.example.test", "short.example.test", "--family", "4")
        #expect(first.status == 0, "\(first.standardError)")
        #expect(server.queries.count == 2)
        try await Task.sleep(for: .milliseconds(1100))  // short.example.test's TTL (1 s) runs out
        try server.setMode(.servfail)

        let second = try await lookup(server, "www.example.test", "short.example.test", "--family", "4")
        #expect(second.status == 0, "\(second.standardError)")
        #expect(second.standardOutput == """
            www.example.test. 3600 IN A 127.0.0.10
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
                                                 "--timeout", "20", "--stale-answer-timeout", "0.3", "--cache-file", cacheFile])
        #expect(ContinuousClock.now - started < .seconds(10), "the stale answer waited for the budget (20 s)")
        #expect(stale.status == 0, "\(stale.standardError)")
        #expect(stale.standardOutput == "short.example.test. 30 IN A 127.0.0.10 ; stale\n")
    }

    @Test func proxyPreresolvesSavesAtExitAndRestartsWarm() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        let names = directory.appendingPathComponent("names").path
        try Data("www.example.test\ncdn.example.test\n".utf8).write(to: URL(fileURLWithPath: names))
        let url = "http://www.example.test:\(lab.httpPort)/whoami"

        let proxy = try await RunningProxy(["--server", "\(server.address)", "--cache-file", cacheFile,
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
        let restarted = try await RunningProxy(["--server", "\(server.address)", "--cache-file", cacheFile, "--family", "4"])
        let again = try await ProcessRunner.run("/usr/bin/curl", ["-sS", "--max-time", "5", "-x", "http://\(restarted.address)", url])
        #expect(again.standardOutput.hasPrefix("origin=www "), "\(again.standardError)")
        #expect(server.queries.count == asked)
        #expect(await restarted.stop() == 0)
    }
}
