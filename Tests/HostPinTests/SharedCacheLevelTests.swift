import Foundation
@testable import HostPin
import Synchronization
import Testing

/// The shared cache as the second level of a ``CachingResolver``, on a store in memory (the Redis store
/// has its own tests against a real redis-server): one resolver's upstream answer feeds another, a store
/// that does not answer costs a miss at most the patience, and a value changed in the store is ignored
/// and counted.
@Suite struct SharedCacheLevelTests {
    /// A store in memory; `silent` never answers a `get` (a hung Redis).
    final class MemoryStore: SharedCacheStore {
        let values = Mutex<[String: [UInt8]]>([:])
        let silent: Bool
        init(silent: Bool = false) { self.silent = silent }

        func get(_ key: String, arrived: @escaping @Sendable () -> Void,
                 reply: @escaping @Sendable (SharedCacheReply) -> Void) {
            guard !silent else { return }
            let value = values.withLock { $0[key] }
            arrived()
            reply(value.map { .value($0) } ?? .absent)
        }

        func set(_ key: String, value: [UInt8], seconds: UInt32) {
            values.withLock { $0[key] = value }
        }
    }

    /// An upstream that answers every name with 127.0.0.10 (TTL 3600), counting what it is asked and
    /// noting when it was first asked; asked without a task (as a ``TrustedResolver`` is), so that when it
    /// is asked does not depend on the cooperative pool's two threads.
    final class FixedUpstream: CompletionResolver {
        let asked = Atomic<Int>(0)
        let firstAsked = Mutex<ContinuousClock.Instant?>(nil)

        func answer(_ name: HostName) -> Resolution {
            asked.add(1, ordering: .relaxed)
            firstAsked.withLock { $0 = $0 ?? .now }
            return Resolution(name: name, addresses: [ResolvedAddress(address: IPAddress("127.0.0.10")!, ttl: 3600)],
                              cnames: [], upstream: Upstream("127.0.0.1:53"), source: .upstream, receivedAt: Date(),
                              dnssec: .secure)
        }

        func resolve(_ name: HostName, family: AddressFamily) async throws(ResolutionError) -> Resolution {
            answer(name)
        }

        func resolveDetailed(_ name: HostName, family: AddressFamily,
                             completion: @escaping @Sendable (Result<ResolutionOutcome, ResolutionError>) -> Void) {
            let resolution = answer(name)
            completion(.success(ResolutionOutcome(answer: .addresses(resolution), ttlLeft: resolution.ttl, age: 0)))
        }
    }

    static let secret = try! SharedCacheSecret(Array("sixteen bytes at least, surely".utf8))
    static let policy = SharedCachePolicy(dnssec: .validate, route: ["127.0.0.1:53"])

    static func instance(_ store: any SharedCacheStore) -> (CachingResolver, FixedUpstream, SharedCache) {
        let upstream = FixedUpstream()
        let shared = SharedCache(store: store, secret: secret, policy: policy)
        return (CachingResolver(upstream: upstream, shared: shared), upstream, shared)
    }

    @Test func aSecondInstanceAnswersFromTheFirstsUpstreamAnswer() async throws {
        let store = MemoryStore()
        let (first, firstUpstream, firstShared) = Self.instance(store)
        let (second, secondUpstream, secondShared) = Self.instance(store)
        let name = try HostName.parse("www.example.test")
        let written = try await first.resolveDetailed(name, family: .any)
        #expect(written.source == .upstream)
        #expect(firstUpstream.asked.load(ordering: .relaxed) == 1)
        #expect(firstShared.metrics.writes == 1 && firstShared.metrics.count(.miss) == 1)
        let read = try await second.resolveDetailed(name, family: .any)
        #expect(read.source == .sharedCache)
        #expect(try read.get().ipAddresses == [IPAddress("127.0.0.10")!])
        #expect(try read.get().dnssec == .secure)
        #expect(read.ttlLeft > 3590 && read.ttlLeft <= 3600)
        #expect(secondUpstream.asked.load(ordering: .relaxed) == 0)
        #expect(secondShared.metrics.count(.hit) == 1 && secondShared.metrics.writes == 0)
        // Then a hit in the second's memory: the store is not asked again.
        #expect(try await second.resolveDetailed(name, family: .any).source == .cache)
        #expect(secondShared.metrics.count(.hit) == 1)
        // The completion path (the stub's) reads the store the same way.
        let cdn = try HostName.parse("cdn.example.test")
        _ = try await first.resolveDetailed(cdn, family: .v4)
        let viaCompletion = await withCheckedContinuation { continuation in
            second.resolveDetailed(cdn, family: .v4) { continuation.resume(returning: $0) }
        }
        #expect(try viaCompletion.get().source == .sharedCache)
        #expect(secondUpstream.asked.load(ordering: .relaxed) == 0)
    }

    @Test func aStoreThatNeverAnswersCostsAMissThePatienceOnly() async throws {
        let (resolver, upstream, shared) = Self.instance(MemoryStore(silent: true))
        let name = try HostName.parse("www.example.test")
        let started = ContinuousClock.now
        let outcome = await withCheckedContinuation { continuation in
            resolver.resolveDetailed(name, family: .any) { continuation.resume(returning: $0) }
        }
        #expect(try outcome.get().source == .upstream)
        #expect(upstream.asked.load(ordering: .relaxed) == 1)
        // The upstream is asked once the patience (20 ms) has run out: on the timer's thread, not the pool's.
        let asked = try #require(upstream.firstAsked.withLock { $0 }) - started
        #expect(asked >= .milliseconds(19))
        #expect(asked < .milliseconds(500), "asked after \(asked)")
        #expect(shared.metrics.late == 1)
    }

    @Test func aValueChangedInTheStoreIsIgnoredAndCounted() async throws {
        let store = MemoryStore()
        let (first, _, _) = Self.instance(store)
        let (second, secondUpstream, secondShared) = Self.instance(store)
        let name = try HostName.parse("www.example.test")
        _ = try await first.resolveDetailed(name, family: .any)
        store.values.withLock { values in
            for key in values.keys { values[key]![60] ^= 0xFF }
        }
        let outcome = try await second.resolveDetailed(name, family: .any)
        #expect(outcome.source == .upstream)
        #expect(secondUpstream.asked.load(ordering: .relaxed) == 1)
        #expect(secondShared.metrics.count(.badTag) == 1)
    }

    @Test func aWriterUnderAnotherPolicyFeedsNoReader() async throws {
        let store = MemoryStore()
        let writer = CachingResolver(upstream: FixedUpstream(), shared: SharedCache(
            store: store, secret: Self.secret, policy: SharedCachePolicy(dnssec: .off, route: ["127.0.0.1:53"])))
        let (reader, readerUpstream, readerShared) = Self.instance(store)
        let name = try HostName.parse("www.example.test")
        _ = try await writer.resolveDetailed(name, family: .any)
        #expect(try await reader.resolveDetailed(name, family: .any).source == .upstream)
        #expect(readerUpstream.asked.load(ordering: .relaxed) == 1)
        #expect(readerShared.metrics.count(.rejected) == 1)
    }
}
