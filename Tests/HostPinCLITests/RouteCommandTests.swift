import Foundation
import HostPinTestSupport
import Testing

/// `--route` on the command line (issue 29's split DNS): the lab's internal NSD answers corp.test, the
/// trusted one the rest, each behind a relay of this test's own that counts what reaches it; `lookup`,
/// `compare`, `fetch`, the proxy and the stub.
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
        // At least once: on a loaded machine c-ares may send its query again before the first answer
        // is read (CI saw 2).
        let askedForCorp = routed.received
        #expect(askedForCorp >= 1)
        #expect(trusted.received == 0)

        let example = try await HostPinBinary.run(["lookup", "www.example.test", "--family", "4"] + route)
        #expect(example.status == 0, "\(example.standardError)")
        #expect(example.standardOutput == "www.example.test. 3600 IN A 127.0.0.10\n; secure\n")
        #expect(routed.received == askedForCorp)
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
        #expect(routed.received >= 1)  // a loaded machine may see the query sent again
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

    /// `compare`'s trusted side and `fetch` go through the route too.
    @Test func compareAndFetchUseTheRoute() async throws {
        let route = ["--route", "corp.test=\(internalDNS)", "--server", "\(lab.trustedDNS)"]
        let compare = try await HostPinBinary.run(["compare", "www.corp.test", "--local", internalDNS] + route)
        #expect(compare.status == 0, "\(compare.standardError)")
        #expect(compare.standardOutput == """
            name: www.corp.test
            trusted (\(internalDNS)): 10.1.2.3
            local (\(internalDNS)): 10.1.2.3
            verdict: consistent

            """)
        let fetch = try await HostPinBinary.run(["fetch", "http://origin.corp.test:\(lab.httpPort)/whoami"] + route)
        #expect(fetch.status == 0, "\(fetch.standardError)")
        #expect(fetch.standardOutput == "origin=www host=origin.corp.test:\(lab.httpPort)\n")
    }

    /// Each bad `--route`, and the sentence after `hostpin: error: ` that names it.
    static let badRoutes: [([String], String)] = [
        (["bad..name=127.0.0.1"], "invalid value for '--route': 'bad..name=127.0.0.1': 'bad..name' is not a valid domain name"),
        (["corp.test="], "invalid value for '--route': 'corp.test=': the route names no server"),
        (["corp.test"], "invalid value for '--route': 'corp.test': expected DOMAIN=UPSTREAM[,UPSTREAM...]"),
        (["corp.test=127.0.0.1,dnssec=maybe"], "invalid value for '--route': 'corp.test=127.0.0.1,dnssec=maybe': dnssec 'maybe' is not validate, report or off"),
        (["corp.test=127.0.0.1", "corp.test=127.0.0.2"], "invalid value for '--route': corp.test has two routes"),
        (["x.onion=127.0.0.1"], "invalid value for '--route': x.onion is of the special-use zone onion"),
        (["corp.test=127.0.0.1:1,127.0.0.1:1"], "invalid value for '--route': 'corp.test=127.0.0.1:1,127.0.0.1:1': '127.0.0.1:1' is listed twice"),
        (["corp.test,Corp.Test.=127.0.0.1"], "invalid value for '--route': 'corp.test,Corp.Test.=127.0.0.1': 'corp.test' is listed twice"),
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
        #expect(routed.received >= 1)  // a loaded machine may see the query sent again

        let bad = folder.appendingPathComponent("bad.json")
        try #"{"routes": [{"domains": ["corp.test"], "servers": ["127.0.0.1"], "allowprivate": true}]}"#
            .write(to: bad, atomically: true, encoding: .utf8)
        let refused = try await HostPinBinary.run(["lookup", "--config", bad.path, "www.corp.test",
                                                   "--server", "\(lab.trustedDNS)"])
        #expect(refused.status == 2)
        #expect(refused.standardError.contains("routes[0].allowprivate: unknown key"), "\(refused.standardError)")
    }

    // MARK: Through the running service: the proxy's rebinding guard and the stub (A, AAAA and forwarded
    // types, dig and glibc's getent)

    /// Without --allow-private: origin.corp.test (a loopback address, special-purpose) is reached because
    /// its route allows private addresses; www.example.test, a public name at the same address, is not.
    @Test func theProxyReachesAPrivateRoutedOriginAndStillRefusesAPublicNameResolvingPrivately() async throws {
        let proxy = try await RunningProxy(["--route", "corp.test=\(internalDNS)", "--server", "\(lab.trustedDNS)"],
                                           allowPrivate: false)
        let routed = try await ProcessRunner.run("/usr/bin/curl", [
            "-sS", "--max-time", "10", "-x", "http://\(proxy.address)", "-w", "\\ncode=%{http_code}",
            "http://origin.corp.test:\(lab.httpPort)/whoami",
        ])
        #expect(routed.standardOutput == "origin=www host=origin.corp.test:\(lab.httpPort)\n\ncode=200", "\(proxy.standardError)")
        let public_ = try await ProcessRunner.run("/usr/bin/curl", [
            "-sS", "--max-time", "10", "-x", "http://\(proxy.address)", "-o", "/dev/null", "-w", "code=%{http_code}",
            "http://www.example.test:\(lab.httpPort)/whoami",
        ])
        #expect(public_.standardOutput == "code=403")
        #expect(await proxy.stop() == 0)
    }

    private static func dig(_ server: String, _ arguments: String...) async throws -> String {
        let (address, port) = try #require(ServeProcess.split(server))
        return try await ProcessRunner.run("/usr/bin/dig", ["@\(address)", "-p", port, "+time=3", "+tries=1"] + arguments)
            .standardOutput
    }

    /// The stub answers a routed name from the internal server alone, a PTR of the routed reverse zone
    /// (a forwarded type) too, and the rest from the trusted one alone.
    @Test func theStubRoutesAddressesAndForwardedTypes() async throws {
        let trusted = try DelayingRelay(target: lab.trustedDNS, delay: .zero)
        let routed = try DelayingRelay(target: lab.internalDNS!, delay: .zero)
        defer { trusted.stop(); routed.stop() }
        let stub = try await ServeProcess(["--dns-listen", "127.0.0.1:0", "--route", "corp.test,10.in-addr.arpa=\(routed.address)",
                                           "--server", "\(trusted.address)"])
        defer { stub.kill() }
        let dns = try #require(stub.dnsAddresses.first)
        #expect(try await Self.dig(dns, "+short", "A", "www.corp.test") == "10.1.2.3\n")
        #expect(try await Self.dig(dns, "+short", "-x", "10.1.2.3") == "www.corp.test.\n")
        #expect(try await Self.dig(dns, "+short", "SOA", "corp.test").hasPrefix("ns.corp.test. hostmaster.corp.test. 1 "))
        #expect(trusted.received == 0)
        let before = routed.received
        #expect(before >= 3)
        #expect(try await Self.dig(dns, "+short", "A", "www.example.test") == "127.0.0.10\n")
        #expect(try await Self.dig(dns, "+short", "TXT", "info.example.test") == "\"hostpin lab\" \"forwarded\"\n")
        #expect(routed.received == before)
        #expect(trusted.received > 0)
    }

    /// `--preresolve` goes through the routes: the routed name is asked of the internal server at start,
    /// and its first use sends no query.
    @Test func preresolvedRoutedNamesComeFromTheirRoute() async throws {
        let trusted = try DelayingRelay(target: lab.trustedDNS, delay: .zero)
        let routed = try DelayingRelay(target: lab.internalDNS!, delay: .zero)
        defer { trusted.stop(); routed.stop() }
        let names = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-route-names-\(UUID().uuidString)")
        try Data("www.corp.test\n".utf8).write(to: names)
        defer { try? FileManager.default.removeItem(at: names) }
        let stub = try await ServeProcess(["--dns-listen", "127.0.0.1:0", "--route", "corp.test=\(routed.address)",
                                           "--server", "\(trusted.address)", "--preresolve", names.path])
        defer { stub.kill() }
        #expect(stub.standardError.contains("pre-resolved 1 name"), "\(stub.standardError)")
        #expect(routed.received == 2)  // A and AAAA
        let dns = try #require(stub.dnsAddresses.first)
        #expect(try await Self.dig(dns, "+short", "A", "www.corp.test") == "10.1.2.3\n")
        #expect(routed.received == 2)
        #expect(trusted.received == 0)
    }

    @Test func getentResolvesRoutedAndOtherNamesThroughTheStub() async throws {
        let result = try await ServeProcess.getent(["--route", "corp.test=\(internalDNS)", "--server", lab.trustedDNS.description],
                                                   "getent hosts www.corp.test && getent hosts www.example.test")
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.standardOutput.split(separator: "\n").map { $0.split(whereSeparator: \.isWhitespace).map(String.init) }
        #expect(lines == [["10.1.2.3", "www.corp.test"], ["127.0.0.10", "www.example.test"]])
    }
}
