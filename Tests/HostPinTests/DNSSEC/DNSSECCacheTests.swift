import Foundation
@testable import HostPin
import HostPinTestSupport
import Testing

/// The DNSSEC status an answer was validated with stays on it in the cache — fresh, stale and negative
/// hits, and the cache file (a bogus entry, kept only in report mode, is not saved) — and a caching
/// resolver in front of a validating one hands it out.
@Suite struct DNSSECCacheTests {
    let received = Date(timeIntervalSince1970: 1_767_225_600)
    let upstream = Upstream("127.0.0.1:53")

    func resolution(_ name: String, _ status: DNSSECStatus?) throws -> Resolution {
        Resolution(name: try HostName.parse(name),
                   addresses: [ResolvedAddress(address: try #require(IPAddress("127.0.0.10")), ttl: 300)],
                   cnames: [], upstream: upstream, source: .upstream, receivedAt: received, dnssec: status)
    }

    func nx(_ status: DNSSECStatus?) throws -> NegativeAnswer {
        NegativeAnswer(name: try HostName.parse("nx.example.test"), family: .v4, kind: .nxdomain, cnames: [],
                       soa: SOARecord(zone: "example.test", ttl: 60, primaryServer: "ns.example.test",
                                      mailbox: "hostmaster.example.test", serial: 1, refresh: 3600, retry: 600,
                                      expire: 86400, minimum: 60),
                       upstream: upstream, source: .upstream, receivedAt: received, dnssec: status)
    }

    @Test func aOneAddressAnswerKeepsItsStatusFreshAndStale() throws {
        let clock = ManualClock()
        let cache = ResolutionCache(clock: clock)
        let name = try HostName.parse("www.example.test")
        cache.store(try resolution("www.example.test", .secure), family: .v4)
        #expect(cache.lookup(name, family: .v4)?.dnssec == .secure)
        clock.advance(by: .seconds(301))
        let stale = try #require(cache.serveStale(name, family: .v4, now: clock.nanoseconds()))
        #expect(stale.answer == .addresses(try resolution("www.example.test", .secure).stale(ttl: cache.policy.staleTTL)))
        cache.store(try nx(.insecure))
        #expect(cache.lookupDetailed(try HostName.parse("nx.example.test"), family: .v4)?.answer
            == .negative(try nx(.insecure).from(.negativeCache)))
    }

    @Test func aReportModeBogusAnswerKeepsItsReasonInTheCache() throws {
        let cache = ResolutionCache(clock: ManualClock())
        let bogus = DNSSECStatus.bogus(BogusReason(rrset: "modified.example.test. A", problem: .signatureInvalid("test")))
        cache.store(try resolution("modified.example.test", bogus), family: .v4)
        #expect(cache.lookup(try HostName.parse("modified.example.test"), family: .v4)?.dnssec == bogus)
    }

    @Test func theCacheFileKeepsTheStatusAndLeavesBogusEntriesOut() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-dnssec-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("cache.jsonl").path
        let cache = ResolutionCache(clock: ManualClock())
        cache.store(try resolution("www.example.test", .secure), family: .v4)
        cache.store(try resolution("plain.example.test", nil), family: .v4)
        cache.store(try resolution("bogus.example.test", .bogus(BogusReason(rrset: "bogus.example.test. A",
                                                                           problem: .signaturesMissing))), family: .v4)
        cache.store(try nx(.indeterminate))
        #expect(try CacheFile.save(cache, to: path, now: received) == 3)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains(#""dnssec":"secure""#) && text.contains(#""dnssec":"indeterminate""#))
        #expect(!text.contains("bogus"))
        let restored = ResolutionCache(clock: ManualClock())
        #expect(try CacheFile.load(from: path, into: restored, now: received.addingTimeInterval(10)).restored == 3)
        #expect(restored.lookup(try HostName.parse("www.example.test"), family: .v4)?.dnssec == .secure)
        #expect(restored.lookup(try HostName.parse("plain.example.test"), family: .v4)?.dnssec == nil)
        guard case .negative(let negative) = restored.lookupDetailed(try HostName.parse("nx.example.test"), family: .v4)?.answer
        else {
            Issue.record("no negative entry")
            return
        }
        #expect(negative.dnssec == .indeterminate)
    }

    @Test func aCachingResolverHandsOutTheValidatedStatus() async throws {
        let lab = try Lab.current()
        let signed = try #require(lab.signedDNS, "the lab predates the signed world: scripts/lab down; scripts/lab up")
        var configuration = TrustedResolver.Configuration(upstreams: [signed])
        configuration.dnssec = DNSSECConfiguration(mode: .validate,
                                                   trustAnchors: try TrustAnchors.load(path: try #require(lab.trustAnchor)))
        let caching = CachingResolver(upstream: try TrustedResolver(configuration: configuration))
        let name = try HostName.parse("www.example.test")
        #expect(try await caching.resolve(name, family: .v4).dnssec == .secure)
        let hit = try await caching.resolve(name, family: .v4)
        #expect(hit.source == .cache)
        #expect(hit.dnssec == .secure)
        let nx = try HostName.parse("nx.example.test")
        for _ in 1...2 {
            let outcome = try await caching.resolveDetailed(nx, family: .v4)
            guard case .negative(let negative) = outcome.answer else {
                Issue.record("\(outcome)")
                return
            }
            #expect(negative.dnssec == .secure)
        }
    }
}
