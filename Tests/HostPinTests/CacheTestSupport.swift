@testable import HostPin
import HostPinTestSupport
import Testing

/// Pieces the cache policy suites share: a caching resolver over one upstream with a hand-moved clock,
/// and a bounded wait for background work.
enum CacheTestSupport {
    /// A ``CachingResolver`` over a ``TrustedResolver`` that asks only `upstream`, once per query (each
    /// waited for `timeout`), within `budget`; its cache's expiry runs on `clock`.
    static func resolver(_ upstream: Upstream, clock: ManualClock, limits: ResolutionCache.Limits = .init(),
                         policy: ResolutionCache.Policy = .init(), timeout: Duration = .milliseconds(300),
                         budget: Duration = .seconds(2), untrustedFallback: Upstream? = nil) throws -> CachingResolver {
        // `upstream` is a server of the test's own (AuthoritativeServer, FaultServer): DNSSEC off.
        var configuration = TrustedResolver.Configuration.ownServer([upstream])
        configuration.timeout = timeout
        configuration.tries = 1
        configuration.budget = budget
        configuration.untrustedFallback = untrustedFallback
        // The lab answers on loopback, which the fallback refuses as a hijack unless told it is ordinary.
        configuration.untrustedFallbackDetector = HijackDetector(ordinary: [IPAddressRange("127.0.0.0/8")!])
        return CachingResolver(upstream: try TrustedResolver(configuration: configuration),
                               cache: ResolutionCache(limits: limits, policy: policy, clock: clock))
    }

    /// Waits until no resolution of `resolver` runs (background refreshes included), at most 10 seconds.
    static func waitForFlights(_ resolver: CachingResolver) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(10)
        while resolver.flightsInProgress > 0, clock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(resolver.flightsInProgress == 0, "a resolution still runs after 10 s")
    }

    /// The queries `server` received for `name`.
    static func queries(_ server: FaultServer, for name: String) -> Int {
        server.queries.filter { $0.name == name }.count
    }

    /// The error `body` throws, or `nil`.
    static func error(_ body: () async throws(ResolutionError) -> Resolution) async -> ResolutionError? {
        do throws(ResolutionError) {
            _ = try await body()
            return nil
        } catch {
            return error
        }
    }

    /// The lab zone's SOA record as NSD sends it in negative answers: TTL 60, the smaller of its TTL
    /// (3600) and MINIMUM (60).
    static let zoneSOA = SOARecord(zone: "example.test", ttl: 60, primaryServer: "ns.example.test",
                                   mailbox: "hostmaster.example.test", serial: 2024010101, refresh: 3600, retry: 600,
                                   expire: 86400, minimum: 60)
}
