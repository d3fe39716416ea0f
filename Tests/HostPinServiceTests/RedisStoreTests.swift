import Foundation
import HostPin
import HostPinService
import HostPinTestSupport
import Testing

/// ``RedisStore`` against a real redis-server on loopback (its own port, started and stopped by each
/// test by PID): values in and out, a Redis killed or hung (SIGSTOP) failing lookups at once or within
/// the 100 ms timeout, and reconnection in the background when it is back.
@Suite(.serialized) struct RedisStoreTests {
    /// `get` as a value.
    static func get(_ store: RedisStore, _ key: String) async -> SharedCacheReply {
        await withCheckedContinuation { continuation in
            store.get(key, arrived: {}) { continuation.resume(returning: $0) }
        }
    }

    @Test func valuesGoInWithTheirTTLAndComeOut() async throws {
        let redis = try await RedisServer()
        let store = RedisStore(endpoint: try RedisEndpoint.parse(redis.url))
        defer { store.close() }
        #expect(await eventually(within: .seconds(10)) { store.isConnected })
        #expect(await Self.get(store, "hostpin:absent") == .absent)
        let value: [UInt8] = [0, 1, 2, 0xFF, 13, 10, 0]
        store.set("hostpin:k", value: value, seconds: 90)
        #expect(await eventually(within: .seconds(10)) { await Self.get(store, "hostpin:k") == .value(value) })
        let ttl = Int(try await redis.cli(["TTL", "hostpin:k"]).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        #expect((85...90).contains(ttl), "TTL \(ttl)")
    }

    @Test func aPasswordIsSentAndADatabaseSelected() async throws {
        let redis = try await RedisServer(requirePass: "fleet-password")
        let store = RedisStore(endpoint: try RedisEndpoint.parse(redis.url + "/3"), password: Array("fleet-password".utf8))
        defer { store.close() }
        #expect(await eventually(within: .seconds(10)) { store.isConnected })
        store.set("hostpin:db", value: [42], seconds: 60)
        #expect(await eventually(within: .seconds(10)) { await Self.get(store, "hostpin:db") == .value([42]) })
        let unauthenticated = RedisStore(endpoint: try RedisEndpoint.parse(redis.url))
        defer { unauthenticated.close() }
        try await Task.sleep(for: .milliseconds(500))
        #expect(!unauthenticated.isConnected)
        #expect(await Self.get(unauthenticated, "hostpin:db") == .failed)
    }

    @Test func aKilledRedisFailsLookupsAtOnceAndARestartedOneIsUsedAgain() async throws {
        let redis = try await RedisServer()
        let store = RedisStore(endpoint: try RedisEndpoint.parse(redis.url))
        defer { store.close() }
        #expect(await eventually(within: .seconds(10)) { store.isConnected })
        redis.kill()
        let started = ContinuousClock.now
        for _ in 0..<20 { #expect(await Self.get(store, "hostpin:k") == .failed) }
        let waited = ContinuousClock.now - started
        #expect(waited < .milliseconds(500), "20 lookups waited \(waited)")
        let again = try await RedisServer(port: redis.port)
        _ = again
        #expect(await eventually(within: .seconds(10)) { store.isConnected })
        #expect(await Self.get(store, "hostpin:k") == .absent)
        #expect(store.connectionCount == 2)
    }

    /// An idle connection that Redis closed (restarted here) is found and replaced without a lookup
    /// using it: else the first lookup after a restart fails, and the `SET`s its answer makes are
    /// dropped while the store reconnects (seen: 99 of 100 keys written in SharedCacheServeTests).
    @Test func anIdleConnectionClosedByRedisIsReplacedBeforeItIsUsed() async throws {
        let redis = try await RedisServer()
        let store = RedisStore(endpoint: try RedisEndpoint.parse(redis.url))
        defer { store.close() }
        #expect(await eventually(within: .seconds(10)) { store.isConnected })
        redis.kill()
        let again = try await RedisServer(port: redis.port)
        _ = again
        #expect(await eventually(within: .seconds(5)) { store.connectionCount == 2 && store.isConnected })
        store.set("hostpin:after", value: [1], seconds: 60)
        #expect(await eventually(within: .seconds(10)) { (try? await again.cli(["GET", "hostpin:after"])) == "\u{1}\n" })
    }

    @Test func aHungRedisCostsALookupTheTimeoutAndThenNothing() async throws {
        let redis = try await RedisServer()
        let store = RedisStore(endpoint: try RedisEndpoint.parse(redis.url))
        defer { store.close() }
        #expect(await eventually(within: .seconds(10)) { store.isConnected })
        redis.hang()
        let started = ContinuousClock.now
        #expect(await Self.get(store, "hostpin:k") == .failed)
        let first = ContinuousClock.now - started
        #expect(first >= .milliseconds(90) && first < .milliseconds(600), "the first lookup waited \(first)")
        // Disconnected now: the next ones fail at once while the store tries again in the background.
        let next = ContinuousClock.now
        for _ in 0..<20 { #expect(await Self.get(store, "hostpin:k") == .failed) }
        #expect(ContinuousClock.now - next < .milliseconds(300))
        redis.resume()
        #expect(await eventually(within: .seconds(10)) { store.isConnected })
        #expect(await Self.get(store, "hostpin:k") == .absent)
    }

    /// A Redis that sends its reply a byte every 20 ms (`scripts/fault-redis --mode trickle`): each
    /// read gets a byte within any per-read timeout, so only a deadline for the whole reply ends it. The
    /// lookup fails within the timeout, the store reconnects, and `close()` does not wait for the reply.
    @Test func aTricklingReplyFailsTheLookupAndTheStoreReconnects() async throws {
        let peer = try await ScriptServer(script: "fault-redis") { directory in
            ["--listen", "127.0.0.1:0", "--mode", "trickle", "--log", directory.appendingPathComponent("connections.log").path]
        }
        defer { peer.stop() }
        let connections = { @Sendable () -> Int in
            ((try? String(contentsOf: peer.directory.appendingPathComponent("connections.log"), encoding: .utf8)) ?? "")
                .split(separator: "\n").count
        }
        let store = RedisStore(endpoint: try RedisEndpoint.parse("redis://" + peer.readyAddress))
        #expect(await eventually(within: .seconds(10)) { store.isConnected })
        let started = ContinuousClock.now
        #expect(await Self.get(store, "hostpin:k") == .failed)
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(90) && waited < .milliseconds(600), "the lookup waited \(waited)")
        #expect(await eventually(within: .seconds(10)) { store.connectionCount >= 2 && store.isConnected })
        #expect(connections() >= 2)
        store.get("hostpin:k", arrived: {}) { _ in }
        try await Task.sleep(for: .milliseconds(20))
        let closing = ContinuousClock.now
        store.close()
        #expect(ContinuousClock.now - closing < .milliseconds(300))
    }

    /// A 50 MB value (set by a Lua script in the real redis-server) is not read whole: the lookup fails
    /// once ``RedisStore/replyLimit`` bytes of it have arrived, and the store reconnects and serves the
    /// next lookup.
    @Test func aHugeReplyFailsTheLookupAndTheStoreReconnects() async throws {
        let redis = try await RedisServer()
        _ = try await redis.cli(["EVAL", "redis.call('SET', KEYS[1], string.rep('x', 52428800))", "1", "hostpin:huge"])
        #expect(try await redis.cli(["STRLEN", "hostpin:huge"]).trimmingCharacters(in: .whitespacesAndNewlines) == "52428800")
        let store = RedisStore(endpoint: try RedisEndpoint.parse(redis.url))
        defer { store.close() }
        #expect(await eventually(within: .seconds(10)) { store.isConnected })
        store.set("hostpin:small", value: [7], seconds: 60)
        #expect(await eventually(within: .seconds(10)) { await Self.get(store, "hostpin:small") == .value([7]) })
        #expect(await Self.get(store, "hostpin:huge") == .failed)
        #expect(await eventually(within: .seconds(10)) { store.connectionCount == 2 && store.isConnected })
        #expect(await Self.get(store, "hostpin:small") == .value([7]))
    }

    @Test(arguments: [
        ("redis://127.0.0.1:6379", "redis://127.0.0.1:6379"),
        ("redis://[::1]:6380/2", "redis://[::1]:6380/2"),
        ("redis://localhost:6379/0", "redis://127.0.0.1:6379"),
    ])
    func urlsRead(_ text: String, _ expected: String) throws {
        #expect(try RedisEndpoint.parse(text).description == expected)
    }

    @Test(arguments: [
        ("rediss://127.0.0.1:6379", RedisEndpointError.tls),
        ("http://127.0.0.1:6379", .scheme),
        ("redis://user:secret@127.0.0.1:6379", .credentials),
        ("redis://redis.example.test:6379", .host("redis.example.test")),
        ("redis://127.0.0.1", .port("")),
        ("redis://127.0.0.1:0", .port("0")),
        ("redis://127.0.0.1:6379/x", .database("x")),
        ("redis://::1:6379", .host("::1")),
        ("redis://localhost:+6379", .port("+6379")),
        ("redis://127.0.0.1:6379/+3", .database("+3")),
    ])
    func badURLsAreRefused(_ text: String, _ error: RedisEndpointError) {
        #expect(throws: error) { try RedisEndpoint.parse(text) }
    }
}
