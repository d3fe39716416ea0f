import Foundation
@testable import HostPin
import HostPinTestSupport
import Testing

/// NXDOMAIN and NODATA kept for the time RFC 2308 §5 allows, counted at the upstream: each test relays to
/// the lab's NSD through a fault server of its own, which logs every query it receives.
@Suite struct NegativeCachingTests {
    let lab: Lab

    init() throws {
        lab = try Lab.current()
    }

    @Test func nxdomainIsCachedForTheSOAsNegativeTTLThenAskedAgain() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        let clock = ManualClock()
        let resolver = try CacheTestSupport.resolver(server.address, clock: clock)
        let name = try HostName.parse("nx.example.test")
        let ask = { () async -> ResolutionError? in
            await CacheTestSupport.error { () throws(ResolutionError) in try await resolver.resolve(name, family: .v4) }
        }
        #expect(await ask() == .nxdomain(name))
        #expect(CacheTestSupport.queries(server, for: name.text) == 1)

        clock.advance(by: .seconds(30))
        let cached = try await resolver.resolveDetailed(name, family: .v4)
        #expect(cached.answer == .negative(NegativeAnswer(
            name: name, family: .v4, kind: .nxdomain, cnames: [], soa: CacheTestSupport.zoneSOA, upstream: server.address,
            source: .negativeCache, receivedAt: try #require(cached.negativeReceivedAt))))
        #expect(cached.ttlLeft == 30)
        #expect(cached.age == 30)
        clock.advance(by: .seconds(29))
        #expect(await ask() == .nxdomain(name))
        #expect(CacheTestSupport.queries(server, for: name.text) == 1)
        #expect(resolver.cache.statistics.negativeHits == 2)

        clock.advance(by: .seconds(1))  // 60 s: min(SOA TTL 60 as sent, MINIMUM 60)
        #expect(await ask() == .nxdomain(name))
        #expect(CacheTestSupport.queries(server, for: name.text) == 2)
    }

    @Test func nodataIsCachedForTheSOAsNegativeTTLThenAskedAgain() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        let clock = ManualClock()
        let resolver = try CacheTestSupport.resolver(server.address, clock: clock)
        let name = try HostName.parse("www.example.test")  // A only: AAAA is NODATA
        let first = try await resolver.resolveDetailed(name, family: .v6)
        let negative = try #require(first.negativeAnswer)
        #expect(negative.kind == .nodata)
        #expect(negative.soa == CacheTestSupport.zoneSOA)
        #expect(negative.cnames.isEmpty)
        #expect(first.ttlLeft == 60)  // min(SOA TTL 60 as sent, MINIMUM 60)
        #expect(CacheTestSupport.queries(server, for: name.text) == 1)

        clock.advance(by: .seconds(59))
        let cached = try await resolver.resolveDetailed(name, family: .v6)
        #expect(cached.source == .negativeCache)
        #expect(cached.ttlLeft == 1)
        #expect(CacheTestSupport.queries(server, for: name.text) == 1)

        clock.advance(by: .seconds(1))
        #expect(try await resolver.resolveDetailed(name, family: .v6).source == .upstream)
        #expect(CacheTestSupport.queries(server, for: name.text) == 2)
    }

    @Test func nodataIsCachedWithItsChainForTheChainsShortestTTL() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        let clock = ManualClock()
        let resolver = try CacheTestSupport.resolver(server.address, clock: clock)
        let name = try HostName.parse("alias.example.test")
        let first = try await resolver.resolveDetailed(name, family: .v6)
        let negative = try #require(first.negativeAnswer)
        #expect(negative.kind == .nodata)
        #expect(negative.source == .upstream)
        #expect(negative.soa == CacheTestSupport.zoneSOA)
        #expect(negative.cnames == [CNAMERecord(alias: "alias.example.test", target: "www.example.test", ttl: 5)])
        #expect(negative.ttl == 5)  // the CNAME's TTL, below the SOA's 60
        #expect(first.ttlLeft == 5)
        #expect(CacheTestSupport.queries(server, for: name.text) == 1)

        clock.advance(by: .seconds(4))
        let error = await CacheTestSupport.error { () throws(ResolutionError) in try await resolver.resolve(name, family: .v6) }
        #expect(error == .nodata(name, .v6))
        #expect(CacheTestSupport.queries(server, for: name.text) == 1)
        clock.advance(by: .seconds(1))
        #expect(try await resolver.resolveDetailed(name, family: .v6).source == .upstream)
        #expect(CacheTestSupport.queries(server, for: name.text) == 2)
        // The other family of the name was never negative: its addresses are asked for and cached.
        #expect(try await resolver.resolve(name, family: .v4).ipAddresses.map(\.description) == ["127.0.0.10"])
    }

    @Test func negativeAnswerWithoutSOAIsNotCached() async throws {
        let server = try await FaultServer(mode: .nxdomain, upstream: nil)
        let resolver = try CacheTestSupport.resolver(server.address, clock: ManualClock())
        let name = try HostName.parse("gone.example.test")
        for _ in 0..<3 {
            let outcome = try await resolver.resolveDetailed(name, family: .v4)
            #expect(outcome.negativeAnswer?.soa == nil)
            #expect(outcome.source == .upstream)
            #expect(outcome.ttlLeft == 0)
        }
        #expect(CacheTestSupport.queries(server, for: name.text) == 3)
        #expect(resolver.cache.count == 0)
    }

    @Test func negativeTTLIsCutToTheLimit() async throws {
        let server = try await FaultServer(upstream: lab.trustedDNS)
        let clock = ManualClock()
        let resolver = try CacheTestSupport.resolver(server.address, clock: clock,
                                                     limits: .init(maximumNegativeTTL: 10))
        let name = try HostName.parse("nx.example.test")
        #expect(try await resolver.resolveDetailed(name, family: .any).ttlLeft == 10)
        clock.advance(by: .seconds(9))
        #expect(try await resolver.resolveDetailed(name, family: .any).source == .negativeCache)
        clock.advance(by: .seconds(1))
        #expect(try await resolver.resolveDetailed(name, family: .any).source == .upstream)
        #expect(CacheTestSupport.queries(server, for: name.text) == 4)  // A and AAAA, twice
    }
}

extension ResolutionOutcome {
    /// The negative answer, if that is what this is.
    var negativeAnswer: NegativeAnswer? {
        if case .negative(let negative) = answer { negative } else { nil }
    }

    /// The negative answer's receive time, if this is one.
    var negativeReceivedAt: Date? { negativeAnswer?.receivedAt }

    /// The addresses, if that is what this is.
    var resolution: Resolution? {
        if case .addresses(let resolution) = answer { resolution } else { nil }
    }
}
