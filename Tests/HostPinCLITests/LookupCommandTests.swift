import Foundation
import HostPinTestSupport
import Testing

/// `hostpin lookup` against the lab's trusted NSD: dig-style lines and exit codes.
@Suite struct LookupCommandTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    /// `--timeout 5`: these tests check answers, not time, and a validated first answer waits for the
    /// chain's five DNSKEY and DS queries too (seen timing out at 1 s beside the main phase).
    private func lookup(_ arguments: String...) async throws -> ProcessRunner.Result {
        try await HostPinBinary.run(["lookup"] + arguments + ["--server", "\(lab.trustedDNS)", "--timeout", "5"])
    }

    @Test func addressRecordPrintsOneDigLine() async throws {
        let result = try await lookup("www.example.test")
        #expect(result.status == 0)
        #expect(result.standardOutput == "www.example.test. 3600 IN A 127.0.0.10\n; secure\n")
        #expect(result.standardError == "")
    }

    @Test func cnamePrintsItsOwnTTLBeforeTheAddress() async throws {
        let result = try await lookup("alias.example.test")
        #expect(result.status == 0)
        #expect(result.standardOutput == """
            alias.example.test. 5 IN CNAME www.example.test.
            www.example.test. 3600 IN A 127.0.0.10
            ; secure

            """)
    }

    @Test func cnameChainPrintsEveryLinkInOrder() async throws {
        let result = try await lookup("chain.example.test")
        #expect(result.status == 0)
        #expect(result.standardOutput == """
            chain.example.test. 30 IN CNAME alias.example.test.
            alias.example.test. 5 IN CNAME www.example.test.
            www.example.test. 3600 IN A 127.0.0.10
            ; secure

            """)  // validated: each RRset keeps its own TTL (RFC 4035 §5.3.3)
    }

    @Test func ipv6AddressPrintsAsAAAA() async throws {
        let result = try await lookup("v6only.example.test", "--family", "6")
        #expect(result.status == 0)
        #expect(result.standardOutput == "v6only.example.test. 3600 IN AAAA ::1\n; secure\n")
    }

    @Test func familyAnyPrintsAThenAAAA() async throws {
        let result = try await lookup("dual.example.test")
        #expect(result.status == 0)
        #expect(result.standardOutput == "dual.example.test. 3600 IN A 127.0.0.10\ndual.example.test. 3600 IN AAAA ::1\n; secure\n")
    }

    @Test func namesPrintInArgumentOrder() async throws {
        let result = try await lookup("cdn.example.test", "www.example.test", "cdn.example.test", "xn--bcher-kva.example.test")
        #expect(result.status == 0)
        #expect(result.standardOutput == """
            cdn.example.test. 3600 IN A 127.0.0.11
            ; secure
            www.example.test. 3600 IN A 127.0.0.10
            ; secure
            cdn.example.test. 3600 IN A 127.0.0.11
            ; secure
            xn--bcher-kva.example.test. 3600 IN A 127.0.0.10
            ; secure

            """)
    }

    @Test func unicodeNameIsLookedUpByItsALabel() async throws {
        let result = try await lookup("bücher.example.test")
        #expect(result.status == 0)
        #expect(result.standardOutput == "xn--bcher-kva.example.test. 3600 IN A 127.0.0.10\n; secure\n")
    }

    @Test func truncatedAnswerIsRetriedOverTCP() async throws {
        let result = try await lookup("big.example.test")
        #expect(result.status == 0)
        let lines = result.standardOutput.split(separator: "\n")
        #expect(lines.count == 101)  // 100 addresses, then the verdict
        #expect(lines.dropLast().allSatisfy { $0.hasPrefix("big.example.test. 3600 IN A 127.0.") })
        #expect(lines.last == "; secure")
    }

    @Test func tcpFlagGivesTheSameAnswer() async throws {
        let result = try await lookup("www.example.test", "--tcp")
        #expect(result.status == 0)
        #expect(result.standardOutput == "www.example.test. 3600 IN A 127.0.0.10\n; secure\n")
    }

    @Test func nxdomainExitsOneWithASentence() async throws {
        let result = try await lookup("nx.example.test")
        #expect(result.status == 1)
        #expect(result.standardOutput == "")
        #expect(result.standardError == "hostpin: nx.example.test: NXDOMAIN (the name does not exist)\n")
    }

    @Test func nodataForTheFamilyExitsOne() async throws {
        let result = try await lookup("v6only.example.test", "--family", "4")
        #expect(result.status == 1)
        #expect(result.standardOutput == "")
        #expect(result.standardError == "hostpin: v6only.example.test: NODATA (the name exists but has no IPv4 (A) record)\n")
    }

    @Test(arguments: [("4", "IPv4 (A)"), ("6", "IPv6 (AAAA)")])
    func recordOfTheOtherFamilyIsNODATA(family: String, record: String) async throws {
        // The server answers an A query with AAAA ::1 and an AAAA query with A 127.0.0.10.
        let server = try await FaultServer(mode: .wrongType, upstream: nil)
        let result = try await HostPinBinary.run(["lookup", "x.test", "--family", family,
                                                  "--server", "\(server.address)", "--timeout", "1", "--dnssec", "off"])
        #expect(result.status == 1)
        #expect(result.standardOutput == "")
        #expect(result.standardError == "hostpin: x.test: NODATA (the name exists but has no \(record) record)\n")
    }

    @Test func oneMissingNameAmongResolvedOnesExitsOne() async throws {
        let result = try await lookup("www.example.test", "nx.example.test")
        #expect(result.status == 1)
        #expect(result.standardOutput == "www.example.test. 3600 IN A 127.0.0.10\n; secure\n")
        #expect(result.standardError == "hostpin: nx.example.test: NXDOMAIN (the name does not exist)\n")
    }

    @Test func upstreamFailureOutranksNXDOMAIN() async throws {
        // REFUSED is an upstream failure (3), NXDOMAIN an answer (1). The lab's fault server refuses
        // refused.fault.test and relays the other names to the trusted NSD (which serves the lab root, so it
        // denies a name outside the lab with NXDOMAIN instead of refusing it).
        let fault = try #require(lab.faultDNS, "the lab has no fault server (LAB_FAULT_DNS)")
        let result = try await HostPinBinary.run(["lookup", "nx.example.test", "refused.fault.test", "www.example.test",
                                                  "--server", "\(fault)", "--timeout", "5"])
        // --timeout 5: www's validation asks the relay for five DNSKEY and DS sets (1 s timed out beside a
        // loaded machine's builds).
        #expect(result.status == 3)
        #expect(result.standardOutput == "www.example.test. 3600 IN A 127.0.0.10\n; secure\n")
        let errors = result.standardError.split(separator: "\n")
        #expect(errors.count == 2)
        #expect(errors.first == "hostpin: nx.example.test: NXDOMAIN (the name does not exist)")
        #expect(errors.last == "hostpin: refused.fault.test: no trusted upstream answered: \(fault): REFUSED")
    }

    @Test func closedPortUpstreamExitsThree() async throws {
        // The ICMP port-unreachable reaches c-ares as ARES_ECONNREFUSED: HostPin says "port unreachable".
        let result = try await HostPinBinary.run(["lookup", "www.example.test", "nx.example.test",
                                            "--server", SilentUpstream.closedPort, "--timeout", "1"])
        #expect(result.status == 3)
        #expect(result.standardOutput == "")
        let errors = result.standardError.split(separator: "\n")
        #expect(errors.count == 2)
        #expect(errors == ["www.example.test", "nx.example.test"].map {
            "hostpin: \($0): no trusted upstream answered: \(SilentUpstream.closedPort): connection refused (port unreachable, or the connection was closed)"
        })
    }

    @Test func silentUpstreamExitsThreeWithinTheBudget() async throws {
        try await SilentUpstream.with { silent in
            let started = ContinuousClock.now
            let result = try await HostPinBinary.run(["lookup", "www.example.test", "--server", silent, "--timeout", "1"])
            #expect(ContinuousClock.now - started < .milliseconds(4500))  // generous: a loaded 2-core machine
            #expect(result.status == 3)
            #expect(result.standardOutput == "")
            #expect(result.standardError == "hostpin: www.example.test: no trusted upstream answered: \(silent): timeout\n")
        }
    }

    @Test func silentFirstUpstreamFailsOverToTheNext() async throws {
        try await SilentUpstream.with { silent in
            let result = try await HostPinBinary.run(["lookup", "www.example.test", "--server", silent,
                                                "--server", "\(lab.trustedDNS)", "--timeout", "2"])
            #expect(result.status == 0)
            #expect(result.standardOutput == "www.example.test. 3600 IN A 127.0.0.10\n; secure\n")
        }
    }
}
