import Foundation
import HostPinTestSupport
import Testing

/// `--route` on the command line (issue 29's split DNS): the lab's internal NSD answers corp.test, the
/// trusted one the rest, each behind a relay of this test's own that counts what reaches it.
@Suite(.serialized) struct RouteCommandTests {
    let lab: Lab
    let internalDNS: String
    init() throws {
        lab = try Lab.current()
        internalDNS = try #require(lab.internalDNS, "the lab has no LAB_INTERNAL_DNS: restart it").description
    }

    @Test func aRoutedNameIsAnsweredByTheInternalServerAloneAndAnotherByTheTrustedOne() async throws {
        let trusted = try DelayingRelay(target: lab.trustedDNS, delay: .zero)
        let routed = try DelayingRelay(target: lab.internalDNS!, delay: .zero)
        defer { trusted.stop(); routed.stop() }
        let route = ["--route", "corp.test=\(routed.address)", "--server", "\(trusted.address)", "--timeout", "5"]

        let corp = try await HostPinBinary.run(["lookup", "www.corp.test", "--family", "4"] + route)
        #expect(corp.status == 0, "\(corp.standardError)")
        #expect(corp.standardOutput == "www.corp.test. 3600 IN A 10.1.2.3\n")
        #expect(routed.received == 1)
        #expect(trusted.received == 0)

        let example = try await HostPinBinary.run(["lookup", "www.example.test", "--family", "4"] + route)
        #expect(example.status == 0, "\(example.standardError)")
        #expect(example.standardOutput == "www.example.test. 3600 IN A 127.0.0.10\n; secure\n")
        #expect(routed.received == 1)
        #expect(trusted.received > 0)
    }

    /// The reverse zone of 10/8, which HostPin answers NXDOMAIN itself, goes to the route that takes it.
    @Test func aRoutedReverseZoneIsAskedOfTheInternalServer() async throws {
        let routed = try DelayingRelay(target: lab.internalDNS!, delay: .zero)
        defer { routed.stop() }
        let unrouted = try await HostPinBinary.run(["lookup", "3.2.1.10.in-addr.arpa", "--family", "4",
                                                    "--server", "\(lab.trustedDNS)"])
        #expect(unrouted.status == 1)
        let result = try await HostPinBinary.run(["lookup", "9.2.1.10.in-addr.arpa", "--family", "4",
                                                  "--route", "10.in-addr.arpa=\(routed.address)",
                                                  "--server", "\(lab.trustedDNS)"])
        #expect(result.status == 1)
        #expect(routed.received == 1)
    }

    /// A route whose server never answers fails its names only: exit 3, the other name answered.
    @Test func anUnreachableRouteFailsOnlyItsNames() async throws {
        let hole = try BlackHole()
        let result = try await HostPinBinary.run(["lookup", "www.corp.test", "www.example.test", "--family", "4",
                                                  "--route", "corp.test=\(hole.address)", "--server", "\(lab.trustedDNS)",
                                                  "--timeout", "1.5"])
        #expect(result.status == 3)
        #expect(result.standardOutput.contains("www.example.test. 3600 IN A 127.0.0.10\n"))
        #expect(result.standardError.contains("www.corp.test"))
        #expect(result.standardError.contains("\(hole.address)"))
    }

    /// Each bad `--route`, and the sentence after `hostpin: error: ` that names it.
    static let badRoutes: [([String], String)] = [
        (["bad..name=127.0.0.1"], "invalid value for '--route': 'bad..name=127.0.0.1': 'bad..name' is not a valid domain name"),
        (["corp.test="], "invalid value for '--route': 'corp.test=': the route names no server"),
        (["corp.test"], "invalid value for '--route': 'corp.test': expected DOMAIN=UPSTREAM[,UPSTREAM...]"),
        (["corp.test=127.0.0.1,dnssec=maybe"], "invalid value for '--route': 'corp.test=127.0.0.1,dnssec=maybe': dnssec 'maybe' is not validate, report or off"),
        (["corp.test=127.0.0.1", "corp.test=127.0.0.2"], "invalid value for '--route': corp.test has two routes"),
        (["x.onion=127.0.0.1"], "invalid value for '--route': x.onion is of the special-use zone onion"),
        (["localhost=127.0.0.1"], "invalid value for '--route': localhost is of the special-use zone localhost"),
    ]

    @Test(arguments: badRoutes)
    func aBadRouteIsAUsageErrorNamingIt(_ routes: [String], _ message: String) async throws {
        let result = try await HostPinBinary.run(["lookup", "www.corp.test", "--server", "\(lab.trustedDNS)"]
                                                 + routes.flatMap { ["--route", $0] })
        #expect(result.status == 2)
        #expect(result.standardError.contains(message), "\(result.standardError)")
        #expect(result.standardOutput == "")
    }

    /// The configuration file's `routes`: the same route, and a bad key named at its path.
    @Test func theConfigFileRoutesAsTheCommandLineDoes() async throws {
        let routed = try DelayingRelay(target: lab.internalDNS!, delay: .zero)
        defer { routed.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("routes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let good = folder.appendingPathComponent("good.json")
        try #"{"routes": [{"domains": ["corp.test"], "servers": ["\#(routed.address)"], "serveStale": false}]}"#
            .write(to: good, atomically: true, encoding: .utf8)
        let result = try await HostPinBinary.run(["lookup", "--config", good.path, "www.corp.test", "--family", "4",
                                                  "--server", "\(lab.trustedDNS)"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput == "www.corp.test. 3600 IN A 10.1.2.3\n")
        #expect(routed.received == 1)

        let bad = folder.appendingPathComponent("bad.json")
        try #"{"routes": [{"domains": ["corp.test"], "servers": ["127.0.0.1"], "allowprivate": true}]}"#
            .write(to: bad, atomically: true, encoding: .utf8)
        let refused = try await HostPinBinary.run(["lookup", "--config", bad.path, "www.corp.test",
                                                   "--server", "\(lab.trustedDNS)"])
        #expect(refused.status == 2)
        #expect(refused.standardError.contains("routes[0].allowprivate: unknown key"), "\(refused.standardError)")
    }
}
