import Foundation
@testable import HostPin
import HostPinTestSupport
import Testing

/// Refresh-ahead: an entry used late in its lifetime is refreshed in the background while callers keep
/// getting the cached answer. Queries are counted at a fault server of each test's own, relaying to the
/// lab's NSD; its delay mode holds the refresh in flight.
@Suite struct RefreshAheadTests {
    let lab: Lab

    init() throws {
        lab = try Lab.current()
    }

    @Test func usedEntryIsRefreshedBeforeExpiryWhileTheCallerNeverWaits() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        let clock = ManualClock()
        let resolver = try CacheTestSupport.resolver(server.address, clock: clock, timeout: .seconds(10),
                                                     budget: .seconds(10))
        let name = try HostName.parse("www.example.test")
        let first = try await resolver.resolve(name, family: .v4)

        clock.advance(by: .seconds(2879))  // just before 0.8 × 3600 s
        #expect(try await resolver.resolve(name, family: .v4).source == .cache)
        #expect(resolver.flightsInProgress == 0)

        try server.setMode(.delay(.seconds(1)))
        clock.advance(by: .seconds(2))
        let used = try await resolver.resolve(name, family: .v4)
        #expect(used.source == .cache)
        #expect(used.receivedAt == first.receivedAt)
        #expect(resolver.flightsInProgress == 1)  // the refresh runs; the caller did not wait for it
        try await CacheTestSupport.waitForFlights(resolver)
        #expect(CacheTestSupport.queries(server, for: name.text) == 2)
        #expect(resolver.cache.statistics.refreshes == 1)

        clock.advance(by: .seconds(1000))  // past the first answer's expiry: the refreshed one is fresh
        let refreshed = try await resolver.resolve(name, family: .v4)
        #expect(refreshed.source == .cache)
        #expect(refreshed.receivedAt > first.receivedAt)
        #expect(CacheTestSupport.queries(server, for: name.text) == 2)
    }

    @Test func thousandCallersOnAnEntryBeingRefreshedAllGetTheCachedAnswerAtOnce() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        let clock = ManualClock()
        let resolver = try CacheTestSupport.resolver(server.address, clock: clock, timeout: .seconds(20),
                                                     budget: .seconds(20))
        let name = try HostName.parse("cdn.example.test")
        let first = try await resolver.resolve(name, family: .v4)
        try server.setMode(.delay(.seconds(3)))
        clock.advance(by: .seconds(3000))
        let sources = try await withThrowingTaskGroup(of: Resolution.Source.self) { group in
            for _ in 0..<1000 { group.addTask { try await resolver.resolve(name, family: .v4).source } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(sources.count == 1000)
        #expect(sources.allSatisfy { $0 == .cache })
        // Every caller is back while the one refresh is still held at the upstream.
        #expect(resolver.flightsInProgress == 1)
        try await CacheTestSupport.waitForFlights(resolver)
        #expect(CacheTestSupport.queries(server, for: name.text) == 2)
        #expect(resolver.cache.statistics.refreshes == 1)
        #expect(resolver.cache.statistics.hits == 1000)
        #expect(try #require(resolver.cache.lookup(name, family: .v4)).receivedAt > first.receivedAt)
    }

    @Test func failedRefreshLeavesTheEntryAndIsRetriedAfterTheInterval() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        let clock = ManualClock()
        let resolver = try CacheTestSupport.resolver(server.address, clock: clock)
        let name = try HostName.parse("www.example.test")
        let first = try await resolver.resolve(name, family: .v4)
        try server.setMode(.servfail)
        clock.advance(by: .seconds(2900))
        #expect(try await resolver.resolve(name, family: .v4) == first.cachedCopy)
        try await CacheTestSupport.waitForFlights(resolver)
        #expect(CacheTestSupport.queries(server, for: name.text) == 2)

        // The entry is as it was, and no refresh starts again within the retry interval (30 s).
        clock.advance(by: .seconds(29))
        #expect(try await resolver.resolve(name, family: .v4) == first.cachedCopy)
        #expect(resolver.flightsInProgress == 0)
        #expect(CacheTestSupport.queries(server, for: name.text) == 2)
        clock.advance(by: .seconds(1))
        #expect(try await resolver.resolve(name, family: .v4) == first.cachedCopy)
        try await CacheTestSupport.waitForFlights(resolver)
        #expect(CacheTestSupport.queries(server, for: name.text) == 3)
        #expect(resolver.cache.statistics.refreshes == 2)
    }

    @Test func refreshAheadOffRefreshesNothing() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        let clock = ManualClock()
        let resolver = try CacheTestSupport.resolver(server.address, clock: clock, policy: .init(refreshAhead: 1))
        _ = try await resolver.resolve("www.example.test", family: .v4)
        clock.advance(by: .seconds(3599))
        #expect(try await resolver.resolve("www.example.test", family: .v4).source == .cache)
        #expect(resolver.flightsInProgress == 0)
        #expect(CacheTestSupport.queries(server, for: "www.example.test") == 1)
    }
}

extension Resolution {
    /// This answer as the cache returns it.
    var cachedCopy: Resolution { from(.cache) }
}
