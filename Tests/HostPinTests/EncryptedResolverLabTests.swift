@testable import HostPin
import HostPinTestSupport
import Testing

/// The resolver through each upstream form against the lab: plain DNS to the trusted NSD, DNS over HTTPS
/// and DNS over TLS to Unbound (`LAB_DOH_URL`, `LAB_DOT_SERVER`), which resolves the same zone from that
/// NSD. Every contract name gets its right value; Unbound counts TTLs down from the zone's, so they are
/// bounded, not exact, through it.
@Suite(.enabled(if: EncryptedLabServer.current != nil, "the lab has no DoH/DoT server (LAB_DOH_URL)"))
struct EncryptedResolverLabTests {
    enum Form: String, CaseIterable, Sendable {
        case plain, doh, dot
    }

    let lab: Lab
    let server: EncryptedLabServer

    init() throws {
        lab = try Lab.current()
        server = try #require(EncryptedLabServer.current)
    }

    /// A resolver with generous timeouts: these tests check answers and handshakes, not time, and run
    /// beside suites that start many servers at once.
    private func resolver(_ configuration: TrustedResolver.Configuration) throws -> TrustedResolver {
        var configuration = configuration
        configuration.timeout = .seconds(3)
        configuration.budget = .seconds(30)
        configuration.dnssec = try lab.dnssec()  // the lab's NSD and Unbound: its signed world
        return try TrustedResolver(configuration: configuration)
    }

    private func upstream(_ form: Form) throws -> Upstream {
        switch form {
        case .plain: lab.trustedDNS
        case .doh: Upstream(try server.upstream(dot: false))
        case .dot: Upstream(try server.upstream(dot: true))
        }
    }

    @Test(arguments: Form.allCases)
    func everyFormResolvesTheContractNames(form: Form) async throws {
        let upstream = try upstream(form)
        let resolver = try resolver(.init(upstreams: [upstream]))

        let www = try await resolver.resolve("www.example.test", family: .any)
        #expect(www.ipAddresses == [IPAddress("127.0.0.10")!])
        #expect(www.ttl > 0 && www.ttl <= 3600)
        #expect(www.upstream == upstream)
        #expect(www.source == .upstream)

        let alias = try await resolver.resolve("alias.example.test", family: .v4)
        #expect(alias.ipAddresses == [IPAddress("127.0.0.10")!])
        #expect(alias.cnames.map { "\($0.alias) → \($0.target)" } == ["alias.example.test → www.example.test"])
        #expect(alias.cnames.allSatisfy { $0.ttl <= 5 })
        #expect(alias.ttl <= 5)

        let v6only = try await resolver.resolve("v6only.example.test", family: .any)
        #expect(v6only.ipAddresses == [.loopbackV6])
        #expect(v6only.ttl > 0 && v6only.ttl <= 3600)

        let big = try await resolver.resolve("big.example.test", family: .v4)
        #expect(big.addresses.count == 100)
        #expect(Set(big.ipAddresses).count == 100)

        await #expect(throws: ResolutionError.nxdomain(try HostName.parse("nx.example.test"))) {
            try await resolver.resolve("nx.example.test", family: .any)
        }
        await #expect(throws: ResolutionError.nodata(try HostName.parse("v6only.example.test"), .v4)) {
            try await resolver.resolve("v6only.example.test", family: .v4)
        }
    }

    @Test(arguments: [Form.doh, .dot])
    func hundredResolutionsThroughOneEncryptedUpstreamShareOneHandshake(form: Form) async throws {
        let resolver = try resolver(.init(upstreams: [try upstream(form)]))
        for index in 0..<100 {
            let name = index % 2 == 0 ? "www.example.test" : "cdn.example.test"
            let resolution = try await resolver.resolve(try HostName.parse(name), family: .any)
            #expect(resolution.ipAddresses == [IPAddress(index % 2 == 0 ? "127.0.0.10" : "127.0.0.11")!])
        }
        #expect(resolver.handshakes(atUpstream: 0) == 1)
    }

    @Test func plainUpstreamHasNoHandshakes() throws {
        let resolver = try TrustedResolver(configuration: .lab([lab.trustedDNS]))
        #expect(resolver.handshakes(atUpstream: 0) == nil)
    }

    @Test func encryptedNameIsBootstrappedThroughThePlainUpstreamsOfTheList() async throws {
        let bare = try Upstream.parse(server.dohURL)
        var configuration = try TrustedResolver.Configuration.lab([bare, lab.trustedDNS])
        configuration.untrustedFallback = lab.trustedDNS2
        #expect(configuration.encryptedNamesWithoutAddress == [try HostName.parse("dns.example.test")])

        let (bootstrapped, lookups) = await configuration.bootstrappingThroughPlainUpstreams()
        #expect(lookups == [.init(name: try HostName.parse("dns.example.test"), outcome: .success([server.address]),
                                  through: [lab.trustedDNS])])
        #expect(bootstrapped.upstreams[0].encrypted?.bootstrap == [server.address])
        #expect(bootstrapped.upstreams[1] == lab.trustedDNS)
        #expect(bootstrapped.encryptedNamesWithoutAddress.isEmpty)

        // The DoH upstream answers, with the lab CA trusted.
        var trusted = bootstrapped
        trusted.upstreams[0] = try trusted.upstreams[0].configured(bootstrap: [], pins: [], extraCAFile: server.caFile)
        let resolution = try await resolver(trusted).resolve("www.example.test", family: .v4)
        #expect(resolution.upstream == trusted.upstreams[0])
        #expect(resolution.ipAddresses == [IPAddress("127.0.0.10")!])
    }

    @Test func withoutPlainUpstreamsNothingIsLookedUpAndTheUpstreamFailsAsUnbootstrapped() async throws {
        let bare = try Upstream.parse(server.dotServer)
        let configuration = try TrustedResolver.Configuration.lab([bare])
        let (unchanged, lookups) = await configuration.bootstrappingThroughPlainUpstreams()
        #expect(lookups.isEmpty)
        #expect(unchanged == configuration)
        let resolver = try resolver(unchanged)
        await #expect(throws: ResolutionError.upstreamsFailed([
            UpstreamFailure(upstream: bare, reason: .encrypted(.noBootstrapAddress(try HostName.parse("dns.example.test")))),
        ])) {
            try await resolver.resolve("www.example.test", family: .v4)
        }
    }
}
