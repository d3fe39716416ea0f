import HostPin
import HostPinTestSupport
import Testing

/// The special-use names (RFC 6761, 6762, 6303, 7686, 8375, 9462): the table, and the library answering
/// them without a query.
@Suite struct SpecialUseNameTests {
    /// One row per zone of the README's table: a name in it, the library's answer, the SOA record's owner.
    static let rows: [(name: String, kind: NegativeAnswer.Kind, zone: String)] = [
        ("x.onion", .nxdomain, "onion"),
        ("x.invalid", .nxdomain, "invalid"),
        ("printer.local", .nxdomain, "local"),
        ("router.home.arpa", .nxdomain, "home.arpa"),
        ("home.arpa", .nodata, "home.arpa"),  // the apex exists: it has the SOA record
        ("_dns.resolver.arpa", .nodata, "resolver.arpa"),
        ("1.2.3.10.in-addr.arpa", .nxdomain, "10.in-addr.arpa"),
        ("1.1.16.172.in-addr.arpa", .nxdomain, "16.172.in-addr.arpa"),
        ("1.1.31.172.in-addr.arpa", .nxdomain, "31.172.in-addr.arpa"),
        ("1.1.168.192.in-addr.arpa", .nxdomain, "168.192.in-addr.arpa"),
        ("1.0.0.0.in-addr.arpa", .nxdomain, "0.in-addr.arpa"),
        ("1.0.0.127.in-addr.arpa", .nxdomain, "127.in-addr.arpa"),
        ("1.1.254.169.in-addr.arpa", .nxdomain, "254.169.in-addr.arpa"),
        ("1.2.0.192.in-addr.arpa", .nxdomain, "2.0.192.in-addr.arpa"),
        ("1.100.51.198.in-addr.arpa", .nxdomain, "100.51.198.in-addr.arpa"),
        ("1.113.0.203.in-addr.arpa", .nxdomain, "113.0.203.in-addr.arpa"),
        ("255.255.255.255.in-addr.arpa", .nodata, "255.255.255.255.in-addr.arpa"),
        (reverse("::1"), .nodata, reverse("::1")),
        (reverse("::"), .nodata, reverse("::")),
        (reverse("fd12::1"), .nxdomain, "d.f.ip6.arpa"),
        (reverse("fe80::1"), .nxdomain, "8.e.f.ip6.arpa"),
        (reverse("febf::1"), .nxdomain, "b.e.f.ip6.arpa"),
        (reverse("2001:db8::1"), .nxdomain, "8.b.d.0.1.0.0.2.ip6.arpa"),
    ]

    /// The ip6.arpa name of `address` (RFC 3596 §2.5): its 32 nibbles, last first.
    static func reverse(_ address: String) -> String {
        let nibbles = IPAddress(address)!.bytes.flatMap { [$0 >> 4, $0 & 0x0F] }
        return nibbles.reversed().map { String($0, radix: 16) }.joined(separator: ".") + ".ip6.arpa"
    }

    @Test(arguments: rows)
    func tableHoldsEveryName(name: String, kind: NegativeAnswer.Kind, zone: String) throws {
        let entry = try #require(SpecialUseName.entry(containing: name))
        #expect(entry.zone == zone)
        #expect(entry.negativeKind(for: name) == kind)
        #expect(entry.soa.zone == zone)
        #expect(entry.soa.primaryServer == zone)
        #expect(entry.soa.negativeTTL == 60)
        // Letter case and an absolute-looking upper-case query change nothing.
        #expect(SpecialUseName.entry(containing: name.uppercased())?.zone == zone)
    }

    @Test func onlyTheReverseZonesAndHomeArpaMayBeRouted() {
        let routed = SpecialUseName.table.filter(\.mayBeRouted).map(\.zone)
        #expect(routed.contains("home.arpa"))
        #expect(routed.filter { !$0.hasSuffix(".in-addr.arpa") && !$0.hasSuffix(".ip6.arpa") } == ["home.arpa"])
        let kept = Set(SpecialUseName.table.filter { !$0.mayBeRouted }.map(\.zone))
        #expect(kept == ["localhost", "invalid", "local", "onion", "resolver.arpa"])
        // RFC 6303 §4: 1 + 16 + 1 (RFC 1918), 7 (RFC 5735), 2 + 1 + 4 + 1 (IPv6).
        #expect(SpecialUseName.table.count - kept.count - 1 == 33)
    }

    /// `test` and `example` (RFC 6761 §6.2, §6.5) stay with the upstreams (the lab serves example.test), as do
    /// ordinary names, names that merely end in the same letters, and the public parts of the reverse tree.
    @Test(arguments: ["www.example.test", "example.test", "www.example", "test", "onion.example.test", "xonion",
                      "notlocal", "x.localx", "arpa", "in-addr.arpa", "8.8.8.8.in-addr.arpa", "1.1.32.172.in-addr.arpa",
                      "1.1.15.172.in-addr.arpa", "1.1.169.192.in-addr.arpa", "x.ip6.arpa", "c.e.f.ip6.arpa",
                      "www.example.org", "a\\.onion", "printer\\.local"])
    func ordinaryNamesAreNotInTheTable(name: String) {
        #expect(SpecialUseName.entry(containing: name) == nil)
    }

    @Test func anEscapedBackslashBeforeTheDotStillEndsALabel() {
        #expect(SpecialUseName.entry(containing: "a\\\\.onion")?.zone == "onion")
    }

    @Test func localhostIsAnsweredWithLoopbackAsBefore() async throws {
        let entry = try #require(SpecialUseName.entry(containing: "app.localhost"))
        #expect(entry.answer == .loopback)
        #expect(entry.negativeKind(for: "app.localhost") == nil)
        let resolver = try TrustedResolver(configuration: .ownServer([Upstream("127.0.0.1:1")!]))  // never asked
        let resolution = try await resolver.resolve(try HostName.parse("app.localhost"), family: .any)
        #expect(resolution.ipAddresses == [.loopbackV4, .loopbackV6])
        #expect(resolution.source == .literal)
    }
}

/// The library answers special-use names itself: a NegativeAnswer with the zone's synthetic SOA record and
/// source `specialUse`, and no query at the upstream (an NSD of the test's own, counted with nsd-control).
@Suite(.serialized) struct SpecialUseNameResolutionTests {
    @Test func everyRowIsAnsweredWithoutAQuery() async throws {
        _ = try Lab.current()
        let server = try await AuthoritativeServer()
        let resolver = CachingResolver(upstream: try TrustedResolver(configuration: .ownServer([server.address])))
        let before = try await server.queries()
        for row in SpecialUseNameTests.rows {
            let name = try HostName.parse(row.name)
            let outcome = try await resolver.resolveDetailed(name, family: .any)
            guard case .negative(let negative) = outcome.answer else {
                Issue.record("\(row.name): \(outcome.answer)")
                continue
            }
            #expect(negative.kind == row.kind, "\(row.name)")
            #expect(negative.soa?.zone == row.zone, "\(row.name)")
            #expect(negative.source == .specialUse, "\(row.name)")
            #expect(negative.upstream == nil, "\(row.name)")
            #expect(outcome.ttlLeft == 60, "\(row.name)")
            await #expect(throws: row.kind == .nxdomain ? ResolutionError.nxdomain(name) : .nodata(name, .v4)) {
                _ = try await resolver.resolve(name, family: .v4)
            }
        }
        #expect(try await server.queries() == before)
        // The count works: a name outside the server's zone is asked (and refused).
        await #expect(throws: ResolutionError.self) { _ = try await resolver.resolve("outside.example.org") }
        #expect(try await server.queries() > before)
    }
}
