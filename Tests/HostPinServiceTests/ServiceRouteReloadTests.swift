import HostPin
import HostPinNet
import HostPinService
import HostPinTestSupport
import Testing

/// A reload that changes the routes (split DNS): a route kept as it was keeps its answers; what a
/// changed route answered, NXDOMAIN included, is dropped by domain, and so is what the default list
/// answered for a domain a new route takes. Each server behind a relay of the test's own that counts.
@Suite(.serialized) struct ServiceRouteReloadTests {
    static func route(_ domain: String, _ server: Upstream) throws -> Route {
        Route(domains: [try HostName.parse(domain)], upstreams: [server])
    }

    @Test func changedAndNewRoutesDropTheirDomainsAnswersAndKeptOnesKeepThem() async throws {
        let lab = try Lab.current()
        let internalDNS = try #require(lab.internalDNS, "the lab has no LAB_INTERNAL_DNS: restart it")
        let first = try DelayingRelay(target: internalDNS, delay: .zero)
        let second = try DelayingRelay(target: internalDNS, delay: .zero)
        let reverse = try DelayingRelay(target: internalDNS, delay: .zero)
        let third = try DelayingRelay(target: lab.trustedDNS, delay: .zero)
        defer { first.stop(); second.stop(); reverse.stop(); third.stop() }
        let kept = KeptLog()
        var configuration = try ServiceLab.configuration(proxy: false)
        configuration.resolverConfiguration.routes = try RouteTable([
            Self.route("corp.test", first.address), Self.route("10.in-addr.arpa", reverse.address),
        ])
        let service = try await Service.start(configuration, log: kept.log)
        let dns = try #require(await service.listeners.dns.first)
        #expect(try await ServiceLab.ask(dns, "www.corp.test") == .noError("10.1.2.3"))
        #expect(try await ServiceLab.ask(dns, "nx.corp.test") == .nxdomain)
        #expect(try await ServiceLab.ask(dns, "3.2.1.10.in-addr.arpa") == .noError())
        #expect(try await ServiceLab.ask(dns, "www.example.test") == .noError("127.0.0.10"))
        let (firstAsked, reverseAsked) = (first.received, reverse.received)
        #expect(firstAsked == 2)

        // corp.test moves to another server, example.test gets a route, 10.in-addr.arpa stays as it was.
        configuration.resolverConfiguration.routes = try RouteTable([
            Self.route("corp.test", second.address), Self.route("10.in-addr.arpa", reverse.address),
            Self.route("example.test", third.address),
        ])
        let reload = try await service.reload(to: configuration)
        #expect(reload.changes.contains { $0.hasPrefix("routes corp.test=\(second.address)") }, "\(reload.changes)")
        #expect(try await ServiceLab.ask(dns, "www.corp.test") == .noError("10.1.2.3"))
        #expect(try await ServiceLab.ask(dns, "nx.corp.test") == .nxdomain)
        #expect(second.received == 2)  // both asked again: the NXDOMAIN went too
        #expect(first.received == firstAsked)
        #expect(try await ServiceLab.ask(dns, "3.2.1.10.in-addr.arpa") == .noError())
        #expect(reverse.received == reverseAsked)  // the unchanged route's answer was kept
        // The default list's answer for a name the new route takes went, though its upstream is still listed.
        #expect(try await ServiceLab.ask(dns, "www.example.test") == .noError("127.0.0.10"))
        #expect(third.received > 0)
        await service.stop()
    }
}
