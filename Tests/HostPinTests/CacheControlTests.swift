import Foundation
@testable import HostPin
import HostPinTestSupport
import Testing

/// Flushing, pre-resolving and the statistics, counted at a fault server of each test's own relaying to
/// the lab's NSD.
@Suite struct CacheControlTests {
    let lab: Lab

    init() throws {
        lab = try Lab.current()
    }

    @Test func flushingANameOrEverythingAsksAgain() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        let resolver = try CacheTestSupport.resolver(server.address, clock: ManualClock())
        let www = try HostName.parse("www.example.test")
        let nx = try HostName.parse("nx.example.test")
        _ = try await resolver.resolve(www, family: .v4)
        _ = try await resolver.resolve(www, family: .any)
        _ = try await resolver.resolve("cdn.example.test", family: .v4)
        _ = try await resolver.resolveDetailed(nx, family: .v4)
        #expect(server.queries.count == 5)  // www: A, then A and AAAA

        resolver.cache.remove(www)
        #expect(resolver.cache.count == 2)
        #expect(try await resolver.resolve(www, family: .v4).source == .upstream)
        #expect(try await resolver.resolve(www, family: .any).source == .upstream)
        #expect(try await resolver.resolve("cdn.example.test", family: .v4).source == .cache)
        #expect(server.queries.count == 8)

        resolver.cache.removeAll()
        #expect(resolver.cache.count == 0)
        #expect(try await resolver.resolve("cdn.example.test", family: .v4).source == .upstream)
        #expect(try await resolver.resolveDetailed(nx, family: .v4).source == .upstream)
        #expect(server.queries.count == 10)
    }

    @Test func preresolvedNamesMakeNoQueryAtFirstUse() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        let resolver = try CacheTestSupport.resolver(server.address, clock: ManualClock())
        let names = try ["www.example.test", "cdn.example.test", "nx.example.test", "alias.example.test", "www.example.test"]
            .map(HostName.parse)
        let results = await resolver.preresolve(names, family: .v4, concurrency: 2)
        #expect(results.count == 5)
        #expect(try results[0].get().source == .upstream || results[0].get().source == .cache)
        #expect(try results[2].get().negativeAnswer?.kind == .nxdomain)
        let asked = server.queries.count
        #expect(asked == 4)  // the repeated name once

        for name in names where name.text != "nx.example.test" {
            #expect(try await resolver.resolve(name, family: .v4).source == .cache)
        }
        let error = await CacheTestSupport.error { () throws(ResolutionError) in
            try await resolver.resolve("nx.example.test", family: .v4)
        }
        #expect(error == .nxdomain(try HostName.parse("nx.example.test")))
        #expect(server.queries.count == asked)
        let statistics = resolver.cache.statistics
        #expect(statistics.entries == 4)
        #expect(statistics.negativeHits == 1)
        #expect(statistics.hits >= 4)
    }
}
