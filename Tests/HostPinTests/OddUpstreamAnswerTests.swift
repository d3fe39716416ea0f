import HostPin
import HostPinTestSupport
import Testing

/// Answers that are read from the DNS message itself: records of the other family are not an answer, and
/// a reply that is not a well-formed response (QR clear, an unassigned RCODE, TC over TCP) is an upstream
/// failure — failover moves on and nothing is cached. Against `scripts/fault-dns` instances of their own.
@Suite struct OddUpstreamAnswerTests {
    let lab: Lab

    init() throws {
        lab = try Lab.current()
    }

    @Test(arguments: [AddressFamily.v4, .v6, .any])
    func recordsOfTheOtherFamilyAreNODATA(family: AddressFamily) async throws {
        let server = try await FaultServer(mode: .wrongType, upstream: nil)
        let resolver = try TrustedResolver(configuration: .ownServer([server.address]))
        let name = try HostName.parse("x.test")
        await #expect(throws: ResolutionError.nodata(name, family)) {
            try await resolver.resolve(name, family: family)
        }
        #expect(resolver.health.status(of: server.address) == .healthy)  // an answer, not a failure
    }

    @Test(arguments: [FaultServer.Mode.qrClear, .rcode15, .truncateOverTCP])
    func malformedReplyIsABadResponseAndTheNextUpstreamAnswers(mode: FaultServer.Mode) async throws {
        let odd = try await FaultServer(mode: mode, upstream: lab.trustedDNS)
        var configuration = TrustedResolver.Configuration.ownServer([odd.address, lab.trustedDNS])
        configuration.tries = 2
        let resolver = try TrustedResolver(configuration: configuration, clock: ManualClock())
        let resolution = try await resolver.resolve("www.example.test", family: .v4)
        #expect(resolution.upstream == lab.trustedDNS)
        #expect(resolution.ipAddresses.map(\.description) == ["127.0.0.10"])
        #expect(resolver.health.status(of: odd.address) == .heldDown(failures: 1, remaining: .seconds(1)))
        // One query (TC over UDP moves it to TCP at the same upstream); a reply is not retried.
        #expect(odd.queries.map(\.transport) == (mode == .truncateOverTCP ? ["udp", "tcp"] : ["udp"]))

        let alone = try TrustedResolver(configuration: .ownServer([odd.address]))
        await #expect(throws: ResolutionError.upstreamsFailed([UpstreamFailure(upstream: odd.address, reason: .badResponse)])) {
            try await alone.resolve("www.example.test", family: .v4)
        }
    }

    @Test(arguments: [FaultServer.Mode.qrClear, .rcode15, .truncateOverTCP])
    func malformedReplyIsNeverCached(mode: FaultServer.Mode) async throws {
        let odd = try await FaultServer(mode: mode, upstream: lab.trustedDNS)
        let resolver = CachingResolver(upstream: try TrustedResolver(configuration: .ownServer([odd.address])))
        for _ in 1...2 {
            await #expect(throws: ResolutionError.upstreamsFailed([UpstreamFailure(upstream: odd.address, reason: .badResponse)])) {
                try await resolver.resolve("www.example.test", family: .v4)
            }
        }
        #expect(resolver.cache.lookup(try HostName.parse("www.example.test"), family: .v4) == nil)
        // Both resolutions reached the upstream: the first left nothing behind.
        #expect(odd.queries.filter { $0.transport == "udp" }.count == 2)
    }
}

/// An upstream that answers A but fails AAAA has failed a resolution for both families: the next upstream
/// is asked, and the first one's addresses are the answer only when no upstream does better.
@Suite struct OneFamilyFailingTests {
    let lab: Lab

    init() throws {
        lab = try Lab.current()
    }

    @Test func nextUpstreamAnswersBothFamilies() async throws {
        let half = try await FaultServer(mode: .servfailAAAA, upstream: lab.trustedDNS)
        let resolver = try TrustedResolver(configuration: .ownServer([half.address, lab.trustedDNS]),
                                           clock: ManualClock())
        let resolution = try await resolver.resolve("dual.example.test", family: .any)
        #expect(resolution.upstream == lab.trustedDNS)
        #expect(resolution.ipAddresses.map(\.description) == ["127.0.0.10", "::1"])
        #expect(resolver.health.status(of: half.address) == .healthy)  // one name's SERVFAIL is no outage
    }

    @Test func itsAddressesAreTheAnswerWhenNoUpstreamDoesBetter() async throws {
        let half = try await FaultServer(mode: .servfailAAAA, upstream: lab.trustedDNS)
        let resolver = try TrustedResolver(configuration: .ownServer([half.address]))
        let resolution = try await resolver.resolve("dual.example.test", family: .any)
        #expect(resolution.upstream == half.address)
        #expect(resolution.source == .upstream)
        #expect(resolution.ipAddresses.map(\.description) == ["127.0.0.10"])
    }
}
