import Foundation
import HostPinTestSupport
import Testing

/// `hostpin compare`, one reason per case: the lab's trusted NSD against a dnsmasq of each test's own
/// that answers only what the test tells it (`--address=/example.test/` makes every other name under
/// example.test NXDOMAIN, so the wildcard probe finds nothing unless the test wants it to). The lab is all
/// loopback, so most cases declare 127.0.0.0/8 ordinary; bad-signature's case uses a `scripts/fault-dns` in
/// forge-a mode instead. Nothing here asks the lab's hijacker.
@Suite struct CompareReasonTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    /// A dnsmasq that says NXDOMAIN for every name under example.test but those `answers` maps to an address.
    private func localServer(_ answers: [String: String]) async throws -> DnsmasqServer {
        try await DnsmasqServer(["--address=/example.test/"] + answers.map { "--address=/\($0.key)/\($0.value)" })
    }

    /// `hostpin compare NAMES` with `--server TRUSTED` (the lab's trusted NSD by default).
    private func compare(_ names: [String], local: DnsmasqServer, _ extra: [String] = [],
                         trusted: String? = nil) async throws -> ProcessRunner.Result {
        try await HostPinBinary.run(["compare"] + names + ["--server", trusted ?? "\(lab.trustedDNS)", "--local", "\(local.address)"]
                                        + extra)
    }

    private static let loopbackOrdinary = ["--ordinary", "127.0.0.0/8"]

    @Test func privateAddressIsASpecialRange() async throws {
        let local = try await localServer(["www.example.test": "10.0.0.1"])
        let result = try await compare(["www.example.test"], local: local, Self.loopbackOrdinary)
        #expect(result.status == 4)
        #expect(result.standardOutput == """
            name: www.example.test
            trusted (\(lab.trustedDNS)): 127.0.0.10 ; secure
            local (\(local.address)): 10.0.0.1
            reason: special-range: the local answer points into special-purpose blocks (RFC 6890), the trusted one \
            does not: 10.0.0.1 in 10.0.0.0/8 (private use, RFC 1918)
            verdict: hijacked

            """)
        #expect(result.standardError == "")
    }

    @Test func answerForANameTheTrustedSideSaysDoesNotExistIsAnNXDOMAINRewrite() async throws {
        let local = try await localServer(["nx.example.test": "127.0.0.77"])
        let result = try await compare(["nx.example.test"], local: local, Self.loopbackOrdinary)
        #expect(result.status == 4)
        #expect(result.standardOutput == """
            name: nx.example.test
            trusted (\(lab.trustedDNS)): nx.example.test: NXDOMAIN (the name does not exist)
            local (\(local.address)): 127.0.0.77
            reason: nxdomain-rewrite: the trusted side says nx.example.test does not exist (NXDOMAIN), the local \
            resolver answers it with 127.0.0.77: NXDOMAIN rewritten (typically to an ad or search page)
            verdict: hijacked

            """)
    }

    @Test func resolverAnsweringEveryNameIsAWildcard() async throws {
        let local = try await DnsmasqServer(["--address=/example.test/127.0.0.77"])
        let result = try await compare(["www.example.test"], local: local, Self.loopbackOrdinary)
        #expect(result.status == 4)
        #expect(CompareOutput.normalised(result.standardOutput) == """
            name: www.example.test
            trusted (\(lab.trustedDNS)): 127.0.0.10 ; secure
            local (\(local.address)): 127.0.0.77
            reason: wildcard: the local resolver answers hostpin-RANDOM.example.test, a random name that does not \
            exist (trusted side: NXDOMAIN), with 127.0.0.77 too: it answers names that do not exist
            verdict: hijacked

            """)
        let unprobed = try await compare(["www.example.test"], local: local, Self.loopbackOrdinary + ["--no-probe"])
        #expect(unprobed.status == 5)
        #expect(unprobed.standardOutput.hasSuffix("verdict: inconclusive\n"))
        #expect(unprobed.standardOutput.contains("reason: disjoint: "))
    }

    @Test func addressOnTheListIsAKnownHijackAddress() async throws {
        let local = try await localServer(["www.example.test": "127.0.0.99"])
        try await withFile("# portals\n127.0.0.96/30   # the test's portal\n") { list in
            let result = try await compare(["www.example.test"], local: local, Self.loopbackOrdinary + ["--hijack-list", list])
            #expect(result.status == 4)
            #expect(result.standardOutput == """
                name: www.example.test
                trusted (\(lab.trustedDNS)): 127.0.0.10 ; secure
                local (\(local.address)): 127.0.0.99
                reason: known-hijack-address: on the known hijack list: 127.0.0.99 matches 127.0.0.96/30 (line 2: the \
                test's portal)
                verdict: hijacked

                """)
        }
    }

    /// 127.0.0.66 (the lab's hijacker origin, nginx) serves a certificate for hijacker.invalid; 127.0.0.10 one
    /// for www.example.test, both from the lab CA.
    @Test func addressServingACertificateForAnotherNameIsABadCertificate() async throws {
        let local = try await localServer(["www.example.test": "127.0.0.66"])
        let probe = Self.loopbackOrdinary + ["--probe-https", "--https-port", "\(lab.httpsPort)", "--ca-file", lab.caFile]
        let result = try await compare(["www.example.test"], local: local, probe)
        #expect(result.status == 4)
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.count == 5)
        let reason = try #require(lines.dropFirst(3).first)
        #expect(reason.hasPrefix("reason: bad-certificate: on port \(lab.httpsPort), the trusted 127.0.0.10 serves a "
            + "certificate valid for www.example.test; 127.0.0.66 serves one for another name ("), "\(reason)")
        #expect(reason.contains("'www.example.test'"), "curl names the host it checked: \(reason)")
        #expect(lines.last == "verdict: hijacked")

        // Without the probe the same answers are only different addresses.
        let unprobed = try await compare(["www.example.test"], local: local, Self.loopbackOrdinary)
        #expect(unprobed.status == 5)
        #expect(unprobed.standardOutput.contains("reason: disjoint: "))
    }

    @Test func probeWithoutTheLabCAFindsNoValidCertificateToContrastWith() async throws {
        let local = try await localServer(["www.example.test": "127.0.0.66"])
        let result = try await compare(["www.example.test"], local: local,
                                       Self.loopbackOrdinary + ["--probe-https", "--https-port", "\(lab.httpsPort)"])
        // Neither certificate leads to a CA the system trusts: nothing tells the two sides apart.
        #expect(result.status == 5)
        #expect(!result.standardOutput.contains("bad-certificate"))
    }

    /// A resolver that rewrites a signed name's answer but cannot sign it (the lab's fault-dns in forge-a
    /// mode: the NSD's answer relayed with its A pointed at 127.0.0.66, the RRSIG kept): bad-signature.
    @Test func aSignedAnswerRewrittenIsABadSignature() async throws {
        let forger = try await FaultServer(mode: .forgeA, upstream: lab.trustedDNS)
        defer { forger.stop() }
        let result = try await HostPinBinary.run(["compare", "www.example.test", "--server", "\(lab.trustedDNS)",
                                                  "--local", "\(forger.address)"] + Self.loopbackOrdinary)
        #expect(result.status == 4, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput.contains("""
            local (\(forger.address)): 127.0.0.66
            reason: bad-signature: the local answer (127.0.0.66) for www.example.test carries signatures that fail \
            (www.example.test. A
            """), "\(result.standardOutput)")
        #expect(result.standardOutput.contains("signature does not verify"), "\(result.standardOutput)")
        #expect(result.standardOutput.hasSuffix("""
            the trusted side validated the name as secure: the answer was changed after the zone signed it
            verdict: hijacked

            """), "\(result.standardOutput)")
    }

    @Test func anotherOrdinaryAddressIsInconclusiveAsACDNWouldBe() async throws {
        let local = try await localServer(["www.example.test": "127.0.0.11"])
        let result = try await compare(["www.example.test"], local: local, Self.loopbackOrdinary)
        #expect(result.status == 5)
        #expect(result.standardOutput == """
            name: www.example.test
            trusted (\(lab.trustedDNS)): 127.0.0.10 ; secure
            local (\(local.address)): 127.0.0.11
            reason: disjoint: 127.0.0.11 is not among the trusted addresses (127.0.0.10), and nothing marks it as a \
            hijack: CDNs and load balancers answer differently by place and time
            reason: no-signatures: the local answer for www.example.test carries no RRSIG, though the trusted side \
            validated the name as secure: nothing proves it forged, as local resolvers often strip signatures
            verdict: inconclusive

            """)
    }

    @Test func nxdomainForANameThatResolvesIsBlocked() async throws {
        let local = try await localServer([:])
        let result = try await compare(["www.example.test"], local: local)
        #expect(result.status == 5)
        #expect(result.standardOutput == """
            name: www.example.test
            trusted (\(lab.trustedDNS)): 127.0.0.10 ; secure
            local (\(local.address)): www.example.test: NXDOMAIN (the name does not exist)
            reason: blocked: the local resolver says www.example.test does not exist (NXDOMAIN), the trusted side \
            resolves it to 127.0.0.10: a filter blocks the name, or its records just changed
            reason: no-signatures: the local answer for www.example.test carries no RRSIG, though the trusted side \
            validated the name as secure: nothing proves it forged, as local resolvers often strip signatures
            verdict: inconclusive

            """)
    }

    @Test func sameAddressIsConsistentWithoutReasons() async throws {
        let local = try await localServer(["www.example.test": "127.0.0.10"])
        let result = try await compare(["www.example.test"], local: local)
        #expect(result.status == 0)
        #expect(result.standardOutput == """
            name: www.example.test
            trusted (\(lab.trustedDNS)): 127.0.0.10 ; secure
            local (\(local.address)): 127.0.0.10
            verdict: consistent

            """)
    }

    @Test func jsonListsEveryReasonWithItsCode() async throws {
        let local = try await localServer(["nx.example.test": "10.0.0.1"])
        let result = try await compare(["nx.example.test"], local: local, ["--json"])
        #expect(result.status == 4)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect(object["verdict"] as? String == "hijacked")
        let reasons = try #require(object["reasons"] as? [[String: String]])
        #expect(reasons == [
            ["code": "special-range", "detail": "the local answer points into special-purpose blocks (RFC 6890), the "
                + "trusted one does not: 10.0.0.1 in 10.0.0.0/8 (private use, RFC 1918)"],
            ["code": "nxdomain-rewrite", "detail": "the trusted side says nx.example.test does not exist (NXDOMAIN), the "
                + "local resolver answers it with 10.0.0.1: NXDOMAIN rewritten (typically to an ad or search page)"],
        ])
        #expect((object["trusted"] as? [String: Any])?["code"] as? String == "nxdomain")
        #expect((object["trusted"] as? [String: Any])?["source"] as? String == "upstream")
    }

    // MARK: several names

    /// The exit status over several names is the highest of 3 (trusted side failed) > 2 (a bad name) > 4
    /// (hijacked) > 5 (inconclusive) > 0.
    @Test func severalNamesExitWithTheHighestStatus() async throws {
        let local = try await localServer(["www.example.test": "127.0.0.99", "cdn.example.test": "127.0.0.12"])
        try await withFile("127.0.0.99 # the test's portal\n") { list in
            let options = Self.loopbackOrdinary + ["--hijack-list", list]
            let cases: [([String], Int32)] = [
                (["www.example.test"], 4),  // on the list
                (["cdn.example.test"], 5),  // 127.0.0.12, not the trusted 127.0.0.11: disjoint
                (["alias.example.test", "cdn.example.test"], 5),  // alias: NXDOMAIN locally, blocked
                (["cdn.example.test", "www.example.test"], 4),
                // The lab's fault server refuses refused.fault.test (and relays the other names to the trusted
                // NSD): the trusted side fails.
                (["www.example.test", "refused.fault.test", "cdn.example.test"], 3),
            ]
            let fault = "\(try #require(lab.faultDNS, "the lab has no fault server (LAB_FAULT_DNS)"))"
            for (names, status) in cases {
                let result = try await compare(names, local: local, options, trusted: fault)
                #expect(result.status == status, "\(names): \(result.standardOutput) \(result.standardError)")
                #expect(result.standardOutput.split(separator: "\n").filter { $0.hasPrefix("name: ") }
                            .map { String($0.dropFirst(6)) } == names)
            }
            let refused = try await compare(["refused.fault.test"], local: local, options, trusted: fault)
            #expect(refused.standardError == "hostpin: refused.fault.test: no trusted upstream answered: \(fault): REFUSED\n")
            #expect(!refused.standardOutput.contains("verdict:"))
            // Among several names, the sentence on standard error says which one had no trusted answer.
            let several = try await compare(["www.example.test", "refused.fault.test", "cdn.example.test"], local: local,
                                            options, trusted: fault)
            #expect(several.standardError == "hostpin: refused.fault.test: no trusted upstream answered: \(fault): REFUSED\n")
        }
    }

    @Test func batchComparesEveryLineInOrderAndABadLineOutranksHijacked() async throws {
        let local = try await localServer(["www.example.test": "127.0.0.99"])
        let names = "# names\nwww.example.test\n\nbad..name\ncdn.example.test\n"
        try await withFile("127.0.0.99 # the test's portal\n") { list in
            try await withFile(names) { batch in
                let result = try await compare(["--batch", batch], local: local,
                                               Self.loopbackOrdinary + ["--hijack-list", list])
                #expect(result.status == 2)
                #expect(result.standardOutput.split(separator: "\n").filter { $0.hasPrefix("name: ") || $0.hasPrefix("verdict: ") }
                            == ["name: www.example.test", "verdict: hijacked", "name: cdn.example.test", "verdict: inconclusive"])
                #expect(result.standardError.hasPrefix("hostpin: 'bad..name' is not a valid host name: "), "\(result.standardError)")
            }
        }
    }

    // MARK: usage

    @Test(arguments: [
        (["--ordinary", "10.0.0.1/8"],
         "invalid value for '--ordinary': '10.0.0.1/8' has bits set after its prefix length (did you mean 10.0.0.0/8?)."),
        (["--ordinary", "loopback"], "invalid value for '--ordinary': 'loopback' is not an IP address or CIDR range."),
        (["--hijack-list", "/nonexistent/list"], "cannot read '/nonexistent/list' for '--hijack-list': it does not exist."),
        (["--hijack-list", "/tmp"],
         "cannot read '/tmp' for '--hijack-list': it is not a regular file (a directory, device, FIFO or socket)."),
        (["--https-port", "8443"], "--https-port sets the port of the HTTPS probe: give --probe-https too."),
        (["--probe-https", "--https-port", "0"], "invalid value for '--https-port': '0' is not a port number from 1 to 65535."),
        (["--probe-https", "--https-port", "65536"],
         "invalid value for '--https-port': '65536' is not a port number from 1 to 65535."),
        (["--no-probe=yes"], "flag '--no-probe' takes no value."),
        (["--batch", "-", "cdn.example.test"],
         "names are given either as arguments or with --batch, not both ('www.example.test')."),
    ])
    func badOptionIsAUsageError(_ arguments: [String], _ message: String) async throws {
        let result = try await HostPinBinary.run(["compare", "www.example.test", "--server", SilentUpstream.closedPort,
                                                  "--local", SilentUpstream.closedPort] + arguments)
        #expect(result.status == 2)
        #expect(result.standardOutput == "")
        #expect(result.standardError == "hostpin: error: \(message)\nSee 'hostpin compare --help'.\n")
    }

    @Test func badListLinesAreAUsageErrorWithTheirLineNumbers() async throws {
        try await withFile("127.0.0.66 # fine\n127.0.0.67\n10.0.0.1/8 # typo\n") { list in
            let result = try await HostPinBinary.run(["compare", "www.example.test", "--server", SilentUpstream.closedPort,
                                                      "--hijack-list", list])
            #expect(result.status == 2)
            #expect(result.standardError == """
                hostpin: error: invalid value for '--hijack-list': \(list) has 2 errors: line 2: 127.0.0.67 has no \
                comment: write '# ' and what it is after it; line 3: '10.0.0.1/8' has bits set after its prefix length \
                (did you mean 10.0.0.0/8?).
                See 'hostpin compare --help'.

                """)
        }
    }

    private func withFile<T>(_ contents: String, _ body: (String) async throws -> T) async throws -> T {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-compare-\(UUID()).txt").path
        _ = FileManager.default.createFile(atPath: path, contents: Data(contents.utf8))
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try await body(path)
    }
}
