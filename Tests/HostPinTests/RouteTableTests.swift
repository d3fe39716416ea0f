import Foundation
import HostPin
import Testing

/// The route table of split DNS on its own: longest suffix by whole labels, the special-use rules, and
/// the bad input that makes no table.
@Suite struct RouteTableTests {
    static func name(_ text: String) -> HostName { try! HostName.parse(text) }

    static func route(_ domains: [String], _ servers: [String] = ["127.0.0.1:53"]) -> Route {
        Route(domains: domains.map(name), upstreams: servers.map { Upstream($0)! })
    }

    static let table = try! RouteTable([
        route(["corp.test"], ["127.0.0.2:53"]),
        route(["eng.corp.test", "10.in-addr.arpa"], ["127.0.0.3:53"]),
        route(["home.arpa"], ["127.0.0.4:53"]),
    ])

    /// Each name and the route index it takes (`nil`: the default list).
    @Test(arguments: [
        ("corp.test", 0), ("www.corp.test", 0), ("a.b.corp.test", 0),
        ("eng.corp.test", 1), ("build.eng.corp.test", 1), ("1.2.3.10.in-addr.arpa", 1),
        ("router.home.arpa", 2),
        ("xcorp.test", nil), ("corp.test.example", nil), ("test", nil), ("www.example.test", nil),
        ("xeng.corp.test", 0), ("10.0.0.1", nil), ("1.10.in-addr.arpa.example", nil), ("localhost", nil),
    ] as [(String, Int?)])
    func longestWholeLabelSuffixWins(_ text: String, _ expected: Int?) {
        #expect(Self.table.routeIndex(for: Self.name(text)) == expected)
    }

    /// A DNS question's name: any case, a trailing dot, and an escaped dot that is no label boundary
    /// (`a\.corp.test` has the labels `a.corp` and `test`: it is not under `corp.test`).
    @Test(arguments: [
        ("WWW.Corp.Test.", 0), ("www.corp.test", 0), ("a\\.eng.corp.test", 0), ("x.a\\.eng.corp.test", 0),
        ("a\\.corp.test", nil),
        ("x\\.corp\\.test", nil), ("", nil), (".", nil), ("example.test.", nil),
    ] as [(String, Int?)])
    func questionNamesFindTheirRoute(_ text: String, _ expected: Int?) {
        #expect(Self.table.routeIndex(forQuestionName: text) == expected)
    }

    @Test func noRouteSendsEveryNameToTheDefaultList() {
        #expect(RouteTable.none.routeIndex(for: Self.name("www.corp.test")) == nil)
        #expect(RouteTable.none.isEmpty)
    }

    @Test func defaultsAllowPrivateSkipValidationAndServeStale() {
        let route = Self.route(["corp.test"])
        #expect(route.allowPrivate)
        #expect(route.dnssec.mode == .off)
        #expect(route.serveStale)
        #expect(route.description == "corp.test=127.0.0.1:53")
    }

    /// Only the reverse zones and home.arpa may be routed; the zones HostPin always answers (and a
    /// domain above one, which would take it) make no table.
    @Test(arguments: ["onion", "x.onion", "invalid", "localhost", "a.localhost", "local", "printer.local",
                      "resolver.arpa", "arpa"])
    func neverRoutedSpecialUseZonesAreRefused(_ domain: String) {
        #expect {
            try RouteTable([Self.route([domain])])
        } throws: { error in
            guard case RouteError.specialUse(let named, _) = error else { return false }
            return named == Self.name(domain)
        }
    }

    @Test(arguments: ["168.192.in-addr.arpa", "10.in-addr.arpa", "d.f.ip6.arpa", "home.arpa", "in-addr.arpa"])
    func reverseZonesAndHomeArpaMayBeRouted(_ domain: String) throws {
        let table = try RouteTable([Self.route([domain])])
        #expect(table.routeIndex(for: Self.name("x." + domain)) == 0)
    }

    @Test func badRoutesAreRefusedByName() {
        #expect(throws: RouteError.duplicateDomain(Self.name("corp.test"))) {
            try RouteTable([Self.route(["corp.test"]), Self.route(["corp.test"], ["127.0.0.9:53"])])
        }
        #expect(throws: RouteError.duplicateDomain(Self.name("corp.test"))) {
            try RouteTable([Self.route(["corp.test", "corp.test"])])
        }
        #expect(throws: RouteError.noUpstreams(Self.name("corp.test"))) {
            try RouteTable([Self.route(["corp.test"], [])])
        }
        #expect(throws: RouteError.addressLiteral(Self.name("10.0.0.1"))) {
            try RouteTable([Self.route(["10.0.0.1"])])
        }
        let empty = Self.route([])
        #expect(throws: RouteError.noDomains(empty)) { try RouteTable([empty]) }
    }

    /// A hundred routes cost one probe per label, not a walk over the routes.
    @Test func aHundredRoutesStillFindTheLongest() throws {
        let routes = (0..<100).map { Self.route(["r\($0).corp.test"]) } + [Self.route(["corp.test"])]
        let table = try RouteTable(routes)
        #expect(table.routeIndex(for: Self.name("www.r57.corp.test")) == 57)
        #expect(table.routeIndex(for: Self.name("www.r100.corp.test")) == 100)
        #expect(table.routeIndex(for: Self.name("www.example.test")) == nil)
    }
}

/// `ResolutionCache.removeAll(underAnyOf:)`: what a reload drops when routes change.
@Suite struct CacheRemovalByDomainTests {
    @Test func entriesAtOrBelowTheDomainsGoNegativeOnesTooAndNoOthers() throws {
        let cache = ResolutionCache()
        let server = Upstream("127.0.0.1:53")!
        func name(_ text: String) throws -> HostName { try HostName.parse(text) }
        for text in ["corp.test", "www.corp.test", "a.b.corp.test", "xcorp.test", "www.example.test"] {
            cache.store(Resolution(name: try name(text), addresses: [ResolvedAddress(address: IPAddress("10.0.0.1")!, ttl: 300)], cnames: [], upstream: server,
                                   source: .upstream, receivedAt: Date()), family: .v4)
        }
        let negative = NegativeAnswer(name: try name("nx.corp.test"), family: .v4, kind: .nxdomain, cnames: [],
                                      soa: SOARecord(zone: "corp.test", ttl: 60, primaryServer: "ns.corp.test",
                                                     mailbox: "hostmaster.corp.test", serial: 1, refresh: 3600, retry: 900,
                                                     expire: 604_800, minimum: 60),
                                      upstream: server, source: .upstream, receivedAt: Date())
        cache.store(negative)
        #expect(cache.count == 6)
        #expect(cache.removeAll(underAnyOf: [try name("corp.test")]) == 4)
        #expect(cache.count == 2)
        #expect(cache.removeAll(underAnyOf: []) == 0)
    }
}

/// The metrics and the status document name each route's upstreams (split DNS).
@Suite struct RouteMetricsTests {
    @Test func routeUpstreamsCarryTheRouteLabelAndStatusField() throws {
        var configuration = TrustedResolver.Configuration(upstreams: [Upstream("127.0.0.1:9")!])
        configuration.dnssec = .off
        configuration.routes = try RouteTable([Route(domains: [try HostName.parse("corp.test"), try HostName.parse("10.in-addr.arpa")],
                                                     upstreams: [Upstream("127.0.0.2:9")!])])
        let metrics = ServiceMetrics(resolver: try TrustedResolver(configuration: configuration), cache: ResolutionCache())
        let text = metrics.exposition()
        #expect(text.contains("hostpin_upstream_queries_total{upstream=\"127.0.0.1:9\"} 0\n"))
        #expect(text.contains("hostpin_upstream_queries_total{upstream=\"127.0.0.2:9\",route=\"corp.test,10.in-addr.arpa\"} 0\n"))
        #expect(text.contains("hostpin_upstream_healthy{upstream=\"127.0.0.2:9\",route=\"corp.test,10.in-addr.arpa\"} 1\n"))
        #expect(text.components(separatedBy: "# TYPE hostpin_upstream_queries_total").count == 2)  // one family
        guard case .object(let status) = metrics.status(), case .array(let upstreams)? = status["upstreams"] else {
            Issue.record("no upstreams in the status document")
            return
        }
        let routes = upstreams.map { item -> JSONValue? in if case .object(let fields) = item { fields["route"] } else { nil } }
        #expect(routes == [.null, .string("corp.test,10.in-addr.arpa")])
    }
}
