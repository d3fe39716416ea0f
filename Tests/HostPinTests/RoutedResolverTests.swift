import HostPin
import HostPinTestSupport
import Testing

/// Split DNS in the trusted resolver, against the lab's internal NSD (corp.test, 10.in-addr.arpa) and the
/// trusted one, each behind a relay of this test's own that counts what reaches it: a routed name is
/// never asked of the default upstreams (DS and DNSKEY included), an unrouted one never of the route's.
@Suite(.serialized) struct RoutedResolverTests {
    /// The default list validates from the lab root (the one test rule); the route, as routes do by
    /// default, does not validate.
    static func resolver(default trusted: Upstream, route routeServer: Upstream, domains: [String] = ["corp.test"])
        throws -> TrustedResolver
    {
        var configuration = try TrustedResolver.Configuration.lab([trusted])
        let names = try domains.map { text throws(ResolutionError) in try HostName.parse(text) }
        configuration.routes = try RouteTable([Route(domains: names, upstreams: [routeServer])])
        return try TrustedResolver(configuration: configuration)
    }

    @Test func aRoutedNameIsAskedOnlyOfItsRouteAndAnotherOnlyOfTheDefault() async throws {
        let lab = try Lab.current()
        let internalDNS = try #require(lab.internalDNS, "the lab has no LAB_INTERNAL_DNS: restart it")
        let trusted = try DelayingRelay(target: lab.trustedDNS, delay: .zero)
        let routed = try DelayingRelay(target: internalDNS, delay: .zero)
        defer { trusted.stop(); routed.stop() }
        let resolver = try Self.resolver(default: trusted.address, route: routed.address)

        let corp = try await resolver.resolve("www.corp.test", family: .v4)
        #expect(corp.addresses.map(\.description) == ["10.1.2.3"])
        #expect(corp.upstream == routed.address)
        #expect(corp.dnssec == nil)
        #expect(routed.received == 1)
        #expect(trusted.received == 0)

        let example = try await resolver.resolve("www.example.test", family: .v4)
        #expect(example.addresses.map(\.description) == ["127.0.0.10"])
        #expect(example.upstream == trusted.address)
        #expect(example.dnssec == .secure)
        #expect(routed.received == 1)
        #expect(trusted.received > 0)
    }

    /// A route that validates (a trust anchor given) builds its chain from its own servers only: the
    /// default list gets no query at all, DS and DNSKEY included.
    @Test func aValidatingRouteAsksItsChainOfItsOwnServersOnly() async throws {
        let lab = try Lab.current()
        let trusted = try DelayingRelay(target: lab.trustedDNS, delay: .zero)
        let routed = try DelayingRelay(target: lab.trustedDNS, delay: .zero)
        defer { trusted.stop(); routed.stop() }
        var configuration = try TrustedResolver.Configuration.lab([trusted.address])
        var route = Route(domains: [try HostName.parse("example.test")], upstreams: [routed.address])
        route.dnssec = try lab.dnssec()
        configuration.routes = try RouteTable([route])
        let resolver = try TrustedResolver(configuration: configuration)
        let answer = try await resolver.resolve("www.example.test", family: .v4)
        #expect(answer.dnssec == .secure)
        #expect(answer.upstream == routed.address)
        #expect(routed.received > 1)  // the answer and its chain's DS and DNSKEY queries
        #expect(trusted.received == 0)
    }

    /// `xcorp.test` is not under `corp.test`: the default list answers it (the lab root's NXDOMAIN).
    @Test func aRouteTakesWholeLabelsOnly() async throws {
        let lab = try Lab.current()
        let internalDNS = try #require(lab.internalDNS)
        let routed = try DelayingRelay(target: internalDNS, delay: .zero)
        defer { routed.stop() }
        let resolver = try Self.resolver(default: lab.trustedDNS, route: routed.address)
        let outcome = try await resolver.resolveDetailed(try HostName.parse("www.xcorp.test"), family: .v4)
        guard case .negative(let negative) = outcome.answer else {
            Issue.record("expected NXDOMAIN, got \(outcome.answer)")
            return
        }
        #expect(negative.kind == .nxdomain)
        #expect(negative.upstream == lab.trustedDNS)
        #expect(routed.received == 0)
    }

    /// A reverse zone HostPin answers itself (RFC 6303) goes to its route when one takes it, through the
    /// cache too; without the route it is answered locally.
    @Test func aRoutedReverseZoneIsAskedOfItsRoute() async throws {
        let lab = try Lab.current()
        let internalDNS = try #require(lab.internalDNS)
        let routed = try DelayingRelay(target: internalDNS, delay: .zero)
        defer { routed.stop() }
        let resolver = try Self.resolver(default: lab.trustedDNS, route: routed.address,
                                         domains: ["corp.test", "10.in-addr.arpa"])
        let caching = CachingResolver(upstream: resolver)
        let name = try HostName.parse("9.9.9.10.in-addr.arpa")
        let outcome = try await caching.resolveDetailed(name, family: .v4)
        guard case .negative(let negative) = outcome.answer else {
            Issue.record("expected the internal server's NXDOMAIN, got \(outcome.answer)")
            return
        }
        #expect(negative.source == .upstream)
        #expect(negative.upstream == routed.address)
        #expect(routed.received == 1)

        let unrouted = CachingResolver(upstream: try TrustedResolver(configuration: .lab([lab.trustedDNS])))
        let local = try await unrouted.resolveDetailed(name, family: .v4)
        #expect(local.source == .specialUse)
    }

    /// A route whose server does not answer fails its own names only.
    @Test func anUnreachableRouteFailsOnlyItsNames() async throws {
        let lab = try Lab.current()
        let hole = try BlackHole()
        var configuration = try TrustedResolver.Configuration.lab([lab.trustedDNS])
        configuration.budget = .milliseconds(600)
        configuration.timeout = .milliseconds(100)
        configuration.routes = try RouteTable([Route(domains: [try HostName.parse("corp.test")], upstreams: [hole.address])])
        let resolver = try TrustedResolver(configuration: configuration)
        await #expect {
            _ = try await resolver.resolve("www.corp.test", family: .v4)
        } throws: { error in
            guard let error = error as? ResolutionError else { return false }
            switch error {
            case .upstreamsFailed(let failures), .timeout(_, let failures): return failures.allSatisfy { $0.upstream == hole.address }
            default: return false
            }
        }
        let example = try await resolver.resolve("www.example.test", family: .v4)
        #expect(example.addresses.map(\.description) == ["127.0.0.10"])
        #expect(resolver.health.status(of: lab.trustedDNS) == .healthy)
    }
}
