import Foundation
import HostPinTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `hostpin serve --shared-cache` on a real redis-server of the test's own (a free loopback port, started
/// and stopped by PID): two instances on one Redis, the second answering what the first resolved without a
/// query at the lab's counting NSD; a value changed in Redis by hand ignored and counted; Redis killed, hung
/// (SIGSTOP) and restarted under traffic. The upstream is the counting NSD, validated from the lab root
/// (`HOSTPIN_TRUST_ANCHOR`, which `scripts/lab up` exports); clients are `hostpin lookup --dnssec off`
/// asking the stub. Serialized: the suite counts the NSD's queries.
@Suite(.serialized) struct SharedCacheServeTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    /// A fresh secret file of 32 bytes; removed after `body`.
    private func withSecret<T>(_ body: (String) async throws -> T) async throws -> T {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-secret-\(UUID())").path
        try Data("a fleet secret of thirty-two byt".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try await body(path)
    }

    private func serve(_ redis: RedisServer, secret: String) async throws -> ServeProcess {
        try await ServeProcess(["--dns-listen", "127.0.0.1:0", "--server", lab.countDNS.description,
                                "--metrics-listen", "127.0.0.1:0", "--shared-cache", redis.url,
                                "--shared-cache-secret", secret])
    }

    /// Looks `names` up through `stub` (one batch, 64 at once): the JSON objects printed.
    private func lookup(_ names: [String], through stub: ServeProcess) async throws -> [[String: Any]] {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-names-\(UUID())").path
        try Data(names.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await HostPinBinary.run(["lookup", "--batch", path, "--concurrency", "64", "--json",
                                                  "--server", try #require(stub.dnsAddresses.first), "--dnssec", "off",
                                                  "--timeout", "20"])
        return try result.standardOutput.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    /// Every name answered right: 127.0.0.10 for `www`, NXDOMAIN for the `n…` names; nothing failed.
    private func expectAnswered(_ objects: [[String: Any]], _ names: [String], _ comment: Comment? = nil) {
        #expect(objects.map { $0["name"] as? String } == names, comment)
        for (name, object) in zip(names, objects) {
            if name == "www.example.test" {
                #expect((object["addresses"] as? [[String: Any]])?.first?["address"] as? String == "127.0.0.10", "\(object)")
            } else {
                #expect(object["code"] as? String == "nxdomain", "\(object)")
            }
        }
    }

    /// The value of the metric `line` (`name{labels}`) on `stub`'s endpoint.
    private func metric(_ stub: ServeProcess, _ line: String) async throws -> Double? {
        let address = try #require(stub.metricsAddress)
        let text = try await ProcessRunner.run("/usr/bin/curl", ["-s", "http://\(address)/metrics"]).standardOutput
        return text.split(separator: "\n").first { $0.hasPrefix(line + " ") }.flatMap { Double($0.split(separator: " ").last!) }
    }

    /// How many connections each instance's store has made (`hostpin_shared_cache_connections_total`).
    private func connections(_ instances: [ServeProcess]) async throws -> [Double] {
        var counts: [Double] = []
        for instance in instances { counts.append(try await metric(instance, "hostpin_shared_cache_connections_total") ?? -1) }
        return counts
    }

    /// Waits (up to 20 s) until each instance's store is connected on a connection made after `made`
    /// (``connections(_:)`` then): "connected" alone can still be an idle connection to the Redis that
    /// went away, which the store finds within its one-second idle check.
    private func reconnected(_ instances: [ServeProcess], after made: [Double]) async throws -> Bool {
        try await eventually(within: .seconds(20), every: .milliseconds(100)) {
            for (instance, count) in zip(instances, made) {
                guard try await metric(instance, "hostpin_shared_cache_connected") == 1,
                      try await metric(instance, "hostpin_shared_cache_connections_total") ?? 0 > count else { return false }
            }
            return true
        }
    }

    private func keys(_ redis: RedisServer) async throws -> Int {
        Int(try await redis.cli(["DBSIZE"]).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    @Test func aSecondInstanceAnswersAThousandNamesWithoutAQueryAtTheUpstream() async throws {
        let redis = try await RedisServer()
        defer { redis.kill() }
        try await withSecret { secret in
            let names = (1...1000).map { $0 % 10 == 0 ? "www.example.test" : "n\($0).shared.example.test" }
            let first = try await serve(redis, secret: secret)
            expectAnswered(try await lookup(names, through: first), names, "first")
            // A and AAAA of 901 distinct names.
            let stored = try await eventually(within: .seconds(20), every: .milliseconds(100)) { try await keys(redis) == 1802 }
            let count = try await keys(redis)
            #expect(stored, "keys: \(count)")
            Glibc.kill(first.pid, SIGTERM)
            _ = try await first.exitStatus()

            let second = try await serve(redis, secret: secret)
            let before = try await lab.countedQueries()
            expectAnswered(try await lookup(names, through: second), names, "second")
            let queries = try await lab.countedQueries() - before
            #expect(queries == 0, "the second instance sent \(queries) queries to the NSD")
            #expect(try await metric(second, "hostpin_shared_cache_lookups_total{result=\"hit\"}") == 1802)
            #expect(try await metric(second, "hostpin_shared_cache_lookups_total{result=\"error\"}") == 0)
            print("shared cache, two instances: 1000 names (1802 keys), second instance's NSD queries: \(queries)")
        }
    }

    @Test func aValueChangedInRedisIsIgnoredAndCounted() async throws {
        let redis = try await RedisServer()
        defer { redis.kill() }
        try await withSecret { secret in
            let names = ["www.example.test"]
            let first = try await serve(redis, secret: secret)
            expectAnswered(try await lookup(names, through: first), names)
            let written = try await eventually(within: .seconds(20), every: .milliseconds(100)) { try await keys(redis) == 2 }
            #expect(written)
            let stored = try await redis.cli(["--scan", "--pattern", "hostpin:*"]).split(separator: "\n").map(String.init)
            #expect(stored.count == 2)
            for key in stored { _ = try await redis.cli(["SETRANGE", key, "40", "forged"]) }
            let second = try await serve(redis, secret: secret)
            let before = try await lab.countedQueries()
            expectAnswered(try await lookup(names, through: second), names)
            #expect(try await lab.countedQueries() > before, "the forged values were used")
            #expect(try await metric(second, "hostpin_shared_cache_lookups_total{result=\"bad_tag\"}") == 2)
            #expect(try await metric(second, "hostpin_shared_cache_lookups_total{result=\"hit\"}") == 0)
        }
    }

    @Test func redisKilledHungAndRestartedCostsClientsNothingAndSharingResumes() async throws {
        let redis = try await RedisServer()
        try await withSecret { secret in
            let first = try await serve(redis, secret: secret)
            let second = try await serve(redis, secret: secret)
            // Killed in the middle of a batch: every name still answered, from the upstream.
            let killed = (1...300).map { "n\($0).killed.example.test" }
            async let answers = lookup(killed, through: first)
            try await Task.sleep(for: .milliseconds(300))
            redis.kill()
            expectAnswered(try await answers, killed, "killed")
            // Hung (SIGSTOP): a new Redis on the same port, stopped; no answer waits for it.
            let hung = try await RedisServer(port: redis.port)
            #expect(try await reconnected([first, second], after: [1, 1]), "both reconnect (backoff at most 2 s)")
            hung.hang()
            let names = (1...100).map { "n\($0).hung.example.test" }
            let started = ContinuousClock.now
            expectAnswered(try await lookup(names, through: second), names, "hung")
            let hungBatch = ContinuousClock.now - started
            print("shared cache, Redis hung: 100 new names in \(hungBatch)")
            #expect(try await metric(second, "hostpin_shared_cache_lookups_total{result=\"error\"}") ?? 0 >= 1)
            // One query at a time (dig): each answered, none waiting on the hung Redis.
            let listening = try #require(second.dnsAddresses.first)
            let (address, port) = try #require(ServeProcess.split(listening))
            var times: [Int] = []
            for index in 1...5 {
                let dig = try await ProcessRunner.run("/usr/bin/dig", ["@\(address)", "-p", port, "+time=2", "+tries=1",
                                                                       "n\(index).dig.hung.example.test"]).standardOutput
                #expect(dig.contains("status: NXDOMAIN"), "\(dig)")
                let line = dig.split(separator: "\n").first { $0.hasPrefix(";; Query time: ") }
                times += line.flatMap { Int($0.dropFirst(";; Query time: ".count).split(separator: " ")[0]) }.map { [$0] } ?? []
            }
            print("shared cache, Redis hung: dig query times \(times) ms")
            #expect(times.count == 5 && times.allSatisfy { $0 < 2000 }, "\(times)")
            // Resumed after a restart: sharing resumes once both have reconnected. Counted after the kill:
            // a stopped Redis's socket still completes handshakes (its backlog), so a store that reconnected
            // to it before the kill counted a connection that was never answered (CI saw 13 lookups fail).
            hung.kill()
            let made = try await connections([first, second])
            let restarted = try await RedisServer(port: redis.port)
            defer { restarted.kill() }
            #expect(try await reconnected([first, second], after: made))
            let shared = (1...50).map { "n\($0).resumed.example.test" }
            expectAnswered(try await lookup(shared, through: first), shared, "resumed, first")
            let storedAgain = try await eventually(within: .seconds(20), every: .milliseconds(100)) { try await keys(restarted) == 100 }
            let countAgain = try await keys(restarted)
            #expect(storedAgain, "keys: \(countAgain)")
            let before = try await lab.countedQueries()
            let counts = ["late_total", "lookups_total{result=\"error\"}", "lookups_total{result=\"hit\"}", "lookups_total{result=\"miss\"}", "connections_total", "connected"]
            var was: [Double] = []
            for name in counts { was.append(try await metric(second, "hostpin_shared_cache_" + name) ?? -1) }
            expectAnswered(try await lookup(shared, through: second), shared, "resumed, second")
            var now: [Double] = []
            for name in counts { now.append(try await metric(second, "hostpin_shared_cache_" + name) ?? -1) }
            #expect(try await lab.countedQueries() == before, "\(counts) before \(was) after \(now)")
        }
    }

    @Test func theConfigurationFileTakesTheSameKeys() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-shared-config-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("sixteen bytes!!!".utf8).write(to: folder.appendingPathComponent("secret"))
        let good = folder.appendingPathComponent("good.json").path
        try Data(#"{"cache": {"shared": "redis://127.0.0.1:6379/1", "sharedSecretFile": "secret"}}"#.utf8)
            .write(to: URL(fileURLWithPath: good))
        let checked = try await HostPinBinary.run(["check-config", good])
        #expect(checked.status == 0, "\(checked.standardError)")
        let effective = try #require(try JSONSerialization.jsonObject(with: Data(checked.standardOutput.utf8)) as? [String: Any])
        let cache = try #require(effective["cache"] as? [String: Any])
        #expect(cache["shared"] as? String == "redis://127.0.0.1:6379/1")
        #expect(cache["sharedSecretFile"] as? String == folder.appendingPathComponent("secret").path)
        #expect(cache["sharedPasswordFile"] is NSNull)
        let bad = folder.appendingPathComponent("bad.json").path
        try Data(#"{"cache": {"shared": "rediss://127.0.0.1:6379", "sharedSecretFile": "missing"}}"#.utf8)
            .write(to: URL(fileURLWithPath: bad))
        let refused = try await HostPinBinary.run(["check-config", bad])
        #expect(refused.status == 2)
        #expect(refused.standardError.contains("cache.shared: 'rediss://127.0.0.1:6379': rediss:// (TLS) is not supported"),
                "\(refused.standardError)")
        #expect(refused.standardError.contains("cache.sharedSecretFile: cannot use '\(folder.path)/missing'"),
                "\(refused.standardError)")
    }

    @Test(arguments: [
        (["--shared-cache", "rediss://127.0.0.1:6379"], "--shared-cache"),
        (["--shared-cache", "redis://user:pw@127.0.0.1:6379"], "--shared-cache-password-file"),
        (["--shared-cache", "redis://cache.example.test:6379"], "is not an IP address"),
        (["--shared-cache", "redis://127.0.0.1:6379"], "it needs --shared-cache-secret FILE"),
        (["--shared-cache", "redis://127.0.0.1:6379", "--shared-cache-secret", "/nonexistent/secret"], "/nonexistent/secret"),
        (["--shared-cache", "redis://127.0.0.1:6379", "--shared-cache-secret", "SHORT"], "it needs at least 16"),
        (["--shared-cache", "redis://127.0.0.1:6379", "--shared-cache-secret", "LONG",
          "--shared-cache-password-file", "/nonexistent/password"], "/nonexistent/password"),
        (["--shared-cache-secret", "LONG"], "need --shared-cache"),
        (["--shared-cache", "redis://127.0.0.1:6379", "--shared-cache-secret", "/dev/zero"],
         "cannot read '/dev/zero' for '--shared-cache-secret': it is not a regular file (a directory, device, FIFO or socket)"),
    ])
    func badSharedCacheOptionsAreUsageErrors(_ arguments: [String], _ says: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-shared-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data("fifteen bytes!!".utf8).write(to: URL(fileURLWithPath: directory + "/short"))
        try Data("sixteen bytes!!!".utf8).write(to: URL(fileURLWithPath: directory + "/long"))
        let resolved = arguments.map { $0 == "SHORT" ? directory + "/short" : $0 == "LONG" ? directory + "/long" : $0 }
        let result = try await HostPinBinary.run(["serve", "--dns-listen", "127.0.0.1:0", "--server", "127.0.0.1:9",
                                                  "--dnssec", "off"] + resolved)
        #expect(result.status == 2, "\(result.standardError)")
        #expect(result.standardError.contains(says), "\(result.standardError)")
    }
}
