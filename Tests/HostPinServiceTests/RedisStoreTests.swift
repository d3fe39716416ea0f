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

    /// Waits (up to `seconds`) until `condition` holds.
    static func eventually(_ seconds: Int = 10, _ condition: () async -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return await condition()
    }

    @Test func valuesGoInWithTheirTTLAndComeOut() async throws {
        let redis = try await RedisServer()
        let store = RedisStore(endpoint: try RedisEndpoint.parse(redis.url))
        defer { store.close() }
        #expect(await Self.eventually { store.isConnected })
        #expect(await Self.get(store, "hostpin:absent") == .absent)
        let value: [UInt8] = [0, 1, 2, 0xFF, 13, 10, 0]
        store.set("hostpin:k", value: value, seconds: 90)
        #expect(await Self.eventually { await Self.get(store, "hostpin:k") == .value(value) })
        let ttl = Int(try await redis.cli(["TTL", "hostpin:k"]).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        #expect((85...90).contains(ttl), "TTL \(ttl)")
    }

    @Test func aPasswordIsSentAndADatabaseSelected() async throws {
        let redis = try await RedisServer(requirePass: "fleet-password")
        let store = RedisStore(endpoint: try RedisEndpoint.parse(redis.url + "/3"), password: Array("fleet-password".utf8))
        defer { store.close() }
        #expect(await Self.eventually { store.isConnected })
        store.set("hostpin:db", value: [42], seconds: 60)
        #expect(await Self.eventually { await Self.get(store, "hostpin:db") == .value([42]) })
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
        #expect(await Self.eventually { store.isConnected })
        redis.kill()
        let started = ContinuousClock.now
        for _ in 0..<20 { #expect(await Self.get(store, "hostpin:k") == .failed) }
        let waited = ContinuousClock.now - started
        #expect(waited < .milliseconds(500), "20 lookups waited \(waited)")
        let again = try await RedisServer(port: redis.port)
        _ = again
        #expect(await Self.eventually { store.isConnected })
        #expect(await Self.get(store, "hostpin:k") == .absent)
        #expect(store.connectionCount == 2)
    }

    @Test func aHungRedisCostsALookupTheTimeoutAndThenNothing() async throws {
        let redis = try await RedisServer()
        let store = RedisStore(endpoint: try RedisEndpoint.parse(redis.url))
        defer { store.close() }
        #expect(await Self.eventually { store.isConnected })
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
        #expect(await Self.eventually { store.isConnected })
        #expect(await Self.get(store, "hostpin:k") == .absent)
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
    ])
    func badURLsAreRefused(_ text: String, _ error: RedisEndpointError) {
        #expect(throws: error) { try RedisEndpoint.parse(text) }
    }
}
