import HostPin
import HostPinTestSupport
import Testing

/// The trusted resolver against the lab's authoritative servers (real NSD).
@Suite struct TrustedResolverTests {
    let lab: Lab
    let resolver: TrustedResolver

    init() throws {
        lab = try Lab.current()
        resolver = try TrustedResolver(configuration: .lab([lab.trustedDNS]))
    }

    struct Expected: Sendable, CustomTestStringConvertible {
        let name: String
        let family: AddressFamily
        let addresses: [String]
        let ttl: UInt32
        let cnames: [String]
        var testDescription: String { "\(name) \(family)" }
    }

    @Test(arguments: [
        Expected(name: "www.example.test", family: .any, addresses: ["127.0.0.10"], ttl: 3600, cnames: []),
        Expected(name: "cdn.example.test", family: .v4, addresses: ["127.0.0.11"], ttl: 3600, cnames: []),
        Expected(name: "v6only.example.test", family: .any, addresses: ["::1"], ttl: 3600, cnames: []),
        Expected(name: "v6only.example.test", family: .v6, addresses: ["::1"], ttl: 3600, cnames: []),
        Expected(name: "dual.example.test", family: .any, addresses: ["127.0.0.10", "::1"], ttl: 3600, cnames: []),
        Expected(name: "alias.example.test", family: .any, addresses: ["127.0.0.10"], ttl: 5,
                 cnames: ["alias.example.test→www.example.test"]),
        Expected(name: "chain.example.test", family: .v4, addresses: ["127.0.0.10"], ttl: 5,
                 cnames: ["chain.example.test→alias.example.test", "alias.example.test→www.example.test"]),
        Expected(name: "short.example.test", family: .v4, addresses: ["127.0.0.10"], ttl: 1, cnames: []),
        Expected(name: "zero.example.test", family: .v4, addresses: ["127.0.0.10"], ttl: 0, cnames: []),
        Expected(name: "multi.example.test", family: .v4, addresses: ["127.0.0.12", "127.0.0.10"], ttl: 3600, cnames: []),
        Expected(name: "wrongcert.example.test", family: .v4, addresses: ["127.0.0.66"], ttl: 3600, cnames: []),
        Expected(name: "bücher.example.test", family: .v4, addresses: ["127.0.0.10"], ttl: 3600, cnames: []),
    ])
    func resolvesEveryContractNameToItsValueAndTTL(expected: Expected) async throws {
        let resolution = try await resolver.resolve(expected.name, family: expected.family)
        #expect(Set(resolution.ipAddresses.map(\.description)) == Set(expected.addresses))
        #expect(resolution.ttl == expected.ttl)
        #expect(resolution.cnames.map { "\($0.alias)→\($0.target)" } == expected.cnames)
        #expect(resolution.upstream == lab.trustedDNS)
        #expect(resolution.source == .upstream)
    }

    @Test func chainTTLIsTheMinimumOverTheCNAMEs() async throws {
        var unvalidated = try TrustedResolver.Configuration.lab([lab.trustedDNS])
        unvalidated.dnssec = .off
        let off = try await TrustedResolver(configuration: unvalidated).resolve("alias.example.test", family: .v4)
        #expect(off.cnames.map(\.ttl) == [5])
        #expect(off.addresses.map(\.ttl) == [3600])  // not validated: each record keeps its own TTL
        #expect(off.ttl == 5)
        #expect(off.canonicalName == "www.example.test")
        // Validated (secure), each RRset keeps its own TTL (RFC 4035 §5.3.3): the CNAME's 5 s does not cap
        // the address.
        let resolution = try await resolver.resolve("alias.example.test", family: .v4)
        #expect(resolution.dnssec == .secure)
        #expect(resolution.cnames.map(\.ttl) == [5])
        #expect(resolution.addresses.map(\.ttl) == [3600])
        #expect(resolution.ttl == 5)
        #expect(resolution.canonicalName == "www.example.test")
    }

    @Test func truncatedAnswerIsRetriedOverTCP() async throws {
        let resolution = try await resolver.resolve("big.example.test", family: .v4)
        #expect(resolution.addresses.count == 100)
        #expect(Set(resolution.ipAddresses.map(\.description)).contains("127.0.1.100"))
    }

    @Test func tcpOnlyModeResolves() async throws {
        var configuration = try TrustedResolver.Configuration.lab([lab.trustedDNS])
        configuration.useTCP = true
        let tcp = try TrustedResolver(configuration: configuration)
        let resolution = try await tcp.resolve("www.example.test", family: .v4)
        #expect(resolution.ipAddresses.map(\.description) == ["127.0.0.10"])
    }

    @Test func missingNameIsNXDOMAIN() async throws {
        let name = try HostName.parse("nx.example.test")
        await #expect(throws: ResolutionError.nxdomain(name)) { try await resolver.resolve(name, family: .any) }
    }

    @Test(arguments: [
        ("v6only.example.test", AddressFamily.v4),
        ("www.example.test", .v6),
    ])
    func nameWithoutTheFamilyIsNODATA(name: String, family: AddressFamily) async throws {
        let parsed = try HostName.parse(name)
        await #expect(throws: ResolutionError.nodata(parsed, family)) { try await resolver.resolve(parsed, family: family) }
    }

    @Test func ipLiteralsAndLocalhostAreAnsweredWithoutUpstream() async throws {
        let silent = try BlackHole()
        let resolver = try TrustedResolver(configuration: .ownServer([silent.address]))  // no query: DNSSEC off
        let v4 = try await resolver.resolve("127.0.0.10")
        #expect(v4.ipAddresses.map(\.description) == ["127.0.0.10"])
        #expect(v4.source == .literal)
        let v6 = try await resolver.resolve("[::1]")
        #expect(v6.ipAddresses.map(\.description) == ["::1"])
        let localhost = try await resolver.resolve("localhost")
        #expect(localhost.ipAddresses.map(\.description) == ["127.0.0.1", "::1"])
        let localhostV4 = try await resolver.resolve("localhost", family: .v4)
        #expect(localhostV4.ipAddresses.map(\.description) == ["127.0.0.1"])
        #expect(localhost.upstream == nil)
    }

    /// REFUSED comes from the lab's fault server (refused.fault.test): the trusted NSD serves the lab root
    /// and denies a name outside its zones with NXDOMAIN instead.
    @Test func refusedNameIsAnUpstreamFailure() async throws {
        let fault = try #require(lab.faultDNS, "the lab has no fault server (LAB_FAULT_DNS)")
        let resolver = try TrustedResolver(configuration: .lab([fault]))
        let error = await #expect(throws: ResolutionError.self) {
            try await resolver.resolve("refused.fault.test", family: .v4)
        }
        #expect(error == .upstreamsFailed([UpstreamFailure(upstream: fault, reason: .refused)]))
    }

    @Test func silentUpstreamFailsWithTimeoutAndNextUpstreamAnswers() async throws {
        let silent = try BlackHole()
        var configuration = TrustedResolver.Configuration.ownServer([silent.address, lab.trustedDNS])  // a black hole of its own
        configuration.timeout = .milliseconds(200)
        configuration.tries = 1
        let resolver = try TrustedResolver(configuration: configuration)
        let resolution = try await resolver.resolve("www.example.test", family: .v4)
        #expect(resolution.upstream == lab.trustedDNS)

        let alone = try TrustedResolver(configuration: {
            var only = configuration
            only.upstreams = [silent.address]
            return only
        }())
        await #expect(throws: ResolutionError.upstreamsFailed([UpstreamFailure(upstream: silent.address, reason: .timeout)])) {
            try await alone.resolve("www.example.test", family: .v4)
        }
    }

    @Test func budgetBoundsAResolutionAgainstSilentUpstreams() async throws {
        let silent = try BlackHole()
        var configuration = TrustedResolver.Configuration.ownServer([silent.address])  // a black hole of its own
        configuration.timeout = .seconds(5)
        configuration.budget = .milliseconds(300)
        let resolver = try TrustedResolver(configuration: configuration)
        let clock = ContinuousClock()
        let start = clock.now
        // The upstream still being asked when the budget runs out is named as timed out.
        await #expect(throws: ResolutionError.timeout(budget: .milliseconds(300),
                                                      [UpstreamFailure(upstream: silent.address, reason: .timeout)])) {
            try await resolver.resolve("www.example.test", family: .v4)
        }
        #expect(clock.now - start < .milliseconds(4500))  // generous: the per-try timeout alone is 5 s
    }

    @Test func emptyUpstreamListIsRejected() {
        #expect(throws: ResolutionError.noUpstreams) { try TrustedResolver(upstreams: []) }
    }

    @Test func cancellingOneLookupLeavesOthersRunning() async throws {
        let relay = try DelayingRelay(target: lab.trustedDNS, delay: .seconds(2))
        defer { relay.stop() }
        // Unvalidated though it relays the lab NSD: each of a chain's DNSKEY and DS queries would wait the
        // relay's 2 s too; the test is about cancelling one of two lookups in flight.
        var configuration = TrustedResolver.Configuration.ownServer([relay.address])
        configuration.timeout = .seconds(5)  // longer than the relay's hold: no retry, no timeout
        configuration.tries = 1
        configuration.budget = .seconds(10)
        let resolver = try TrustedResolver(configuration: configuration)
        let cancelled = Task { try await resolver.resolve("www.example.test", family: .v4) }
        let kept = Task { try await resolver.resolve("cdn.example.test", family: .v4) }
        try await waitUntil { relay.received == 2 }  // not a fixed sleep: the machine may be busy
        #expect(relay.received == 2)  // both queries are in flight at the upstream
        cancelled.cancel()
        await #expect(throws: ResolutionError.cancelled) { try await cancelled.value }
        let answer = try await kept.value
        #expect(answer.ipAddresses.map(\.description) == ["127.0.0.11"])
    }
}
