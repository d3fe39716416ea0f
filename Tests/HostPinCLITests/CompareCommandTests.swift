import Foundation
import HostPinTestSupport
import Testing

/// `hostpin compare` against the lab's hijacker (dnsmasq answering every name under example.test with
/// 127.0.0.66): both answers side by side, the reasons, the verdict line and its exit code. Several tests
/// ask the hijacker as the local resolver on purpose: the name matches `HijackerOptIn`, the pattern
/// `scripts/test` lets reach the hijacker. Each reason on a server of its own: `CompareReasonTests`.
@Suite struct CompareCommandHijackerOptInTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    private func compare(_ name: String, local: String, server: String? = nil, _ extra: String...) async throws
        -> ProcessRunner.Result
    {
        try await HostPinBinary.run(["compare", name, "--server", server ?? "\(lab.trustedDNS)", "--local", local,
                               "--timeout", "1"] + extra)
    }

    /// The hijacker answers 127.0.0.66 for every name: the wildcard probe shows it (the trusted answer is
    /// loopback too, so the special range is no evidence here).
    @Test func hijackerAnswerIsHijackedByTheWildcardReason() async throws {
        let result = try await compare("www.example.test", local: "\(lab.hijackDNS)")
        #expect(result.status == 4)
        #expect(CompareOutput.normalised(result.standardOutput) == """
            name: www.example.test
            trusted (\(lab.trustedDNS)): 127.0.0.10 ; secure
            local (\(lab.hijackDNS)): 127.0.0.66
            reason: wildcard: the local resolver answers hostpin-RANDOM.example.test, a random name that does not \
            exist (trusted side: NXDOMAIN), with 127.0.0.66 too: it answers names that do not exist
            verdict: hijacked

            """)
        #expect(result.standardError == "")
    }

    @Test func withoutTheProbeTheHijackerIsOnlyDisjoint() async throws {
        let result = try await compare("www.example.test", local: "\(lab.hijackDNS)", "--no-probe")
        #expect(result.status == 5)
        #expect(result.standardOutput.hasSuffix("""
            reason: disjoint: 127.0.0.66 is not among the trusted addresses (127.0.0.10), and nothing marks it as a \
            hijack: CDNs and load balancers answer differently by place and time
            reason: no-signatures: the local answer for www.example.test carries no RRSIG, though the trusted side \
            validated the name as secure: nothing proves it forged, as local resolvers often strip signatures
            verdict: inconclusive

            """))
    }

    @Test func hijackerOnTheShippedListIsAKnownHijackAddress() async throws {
        let list = Lab.repositoryRoot.appendingPathComponent("examples/hijack-list.txt").path
        let result = try await compare("www.example.test", local: "\(lab.hijackDNS)", "--hijack-list", list)
        #expect(result.status == 4)
        #expect(CompareOutput.normalised(result.standardOutput).hasSuffix("""
            reason: known-hijack-address: on the known hijack list: 127.0.0.66 matches 127.0.0.66 (line 12: lab hijacker's page)
            verdict: hijacked

            """))
    }

    @Test func anotherTrustedServerIsConsistent() async throws {
        let result = try await compare("www.example.test", local: "\(lab.trustedDNS2)")
        #expect(result.status == 0)
        #expect(result.standardOutput == """
            name: www.example.test
            trusted (\(lab.trustedDNS)): 127.0.0.10 ; secure
            local (\(lab.trustedDNS2)): 127.0.0.10
            verdict: consistent

            """)
    }

    @Test func answerForANonexistentNameIsHijackedForThreeReasons() async throws {
        let result = try await compare("nx.example.test", local: "\(lab.hijackDNS)")
        #expect(result.status == 4)
        #expect(CompareOutput.normalised(result.standardOutput) == """
            name: nx.example.test
            trusted (\(lab.trustedDNS)): nx.example.test: NXDOMAIN (the name does not exist)
            local (\(lab.hijackDNS)): 127.0.0.66
            reason: special-range: the local answer points into special-purpose blocks (RFC 6890), the trusted one \
            does not: 127.0.0.66 in 127.0.0.0/8 (loopback, RFC 1122)
            reason: nxdomain-rewrite: the trusted side says nx.example.test does not exist (NXDOMAIN), the local \
            resolver answers it with 127.0.0.66: NXDOMAIN rewritten (typically to an ad or search page)
            reason: wildcard: the local resolver answers hostpin-RANDOM.example.test, a random name that does not \
            exist (trusted side: NXDOMAIN), with 127.0.0.66 too: it answers names that do not exist
            verdict: hijacked

            """)
    }

    @Test func bothSidesSayingNXDOMAINIsConsistent() async throws {
        let result = try await compare("nx.example.test", local: "\(lab.trustedDNS2)")
        #expect(result.status == 0)
        #expect(result.standardOutput.hasSuffix("verdict: consistent\n"))
    }

    @Test func silentLocalResolverIsInconclusive() async throws {
        try await SilentUpstream.with { silent in
            let result = try await compare("www.example.test", local: silent)
            #expect(result.status == 5)
            #expect(result.standardOutput == """
                name: www.example.test
                trusted (\(lab.trustedDNS)): 127.0.0.10 ; secure
                local (\(silent)): the local resolver did not answer: \(silent): timeout
                reason: local-failed: the local resolver gave no answer (\(silent): timeout): nothing to compare
                verdict: inconclusive

                """)
        }
    }

    @Test func closedLocalPortIsInconclusive() async throws {
        let result = try await compare("www.example.test", local: SilentUpstream.closedPort)
        #expect(result.status == 5)
        #expect(result.standardOutput.hasSuffix("verdict: inconclusive\n"))
        let json = try await compare("www.example.test", local: SilentUpstream.closedPort, "--json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        let local = try #require(object["local"] as? [String: Any])
        #expect(local["code"] as? String == "upstreams_failed")
        #expect(local["source"] as? String == "untrusted")  // the failure came from the local resolver
        #expect((object["trusted"] as? [String: Any])?["source"] as? String == "upstream")
    }

    @Test func failingTrustedSideExitsThreeWithoutAVerdict() async throws {
        try await SilentUpstream.with { silent in
            let result = try await compare("www.example.test", local: "\(lab.hijackDNS)", server: silent)
            #expect(result.status == 3)
            #expect(result.standardOutput == """
                name: www.example.test
                trusted (\(silent)): no trusted upstream answered: \(silent): timeout
                local (\(lab.hijackDNS)): 127.0.0.66

                """)
            #expect(result.standardError == "hostpin: www.example.test: no trusted upstream answered: \(silent): timeout\n")
        }
    }

    @Test func jsonHoldsBothSidesAndTheVerdict() async throws {
        let result = try await compare("www.example.test", local: "\(lab.hijackDNS)", "--json")
        #expect(result.status == 4)
        let lines = result.standardOutput.split(separator: "\n")
        #expect(lines.count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["name", "trusted", "local", "reasons", "verdict"])
        #expect(object["name"] as? String == "www.example.test")
        #expect(object["verdict"] as? String == "hijacked")
        let reasons = try #require(object["reasons"] as? [[String: String]])
        #expect(reasons.map { $0["code"] } == ["wildcard"])
        #expect(reasons.first?["detail"]?.hasSuffix("with 127.0.0.66 too: it answers names that do not exist") == true)
        let trusted = try #require(object["trusted"] as? [String: Any])
        let local = try #require(object["local"] as? [String: Any])
        #expect((trusted["addresses"] as? [[String: Any]])?.first?["address"] as? String == "127.0.0.10")
        #expect(trusted["source"] as? String == "upstream")
        #expect(trusted["upstream"] as? String == "\(lab.trustedDNS)")
        #expect((local["addresses"] as? [[String: Any]])?.first?["address"] as? String == "127.0.0.66")
        #expect(local["source"] as? String == "untrusted")
        #expect(local["upstream"] as? String == "\(lab.hijackDNS)")
    }

    @Test func jsonVerdictIsNullWhenTheTrustedSideFails() async throws {
        let result = try await compare("www.example.test", local: "\(lab.hijackDNS)", server: SilentUpstream.closedPort, "--json")
        #expect(result.status == 3)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect(object["verdict"] is NSNull)
        #expect((object["reasons"] as? [Any])?.isEmpty == true)
        #expect((object["trusted"] as? [String: Any])?["code"] as? String == "upstreams_failed")
        #expect((object["trusted"] as? [String: Any])?["source"] as? String == "upstream")
    }

    @Test func severalNamesGetAnObjectEachInOrder() async throws {
        let result = try await compare("www.example.test", local: "\(lab.hijackDNS)", "nx.example.test", "alias.example.test",
                                       "--json")
        #expect(result.status == 4)
        let objects = try result.standardOutput.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        #expect(objects.map { $0["name"] as? String } == ["www.example.test", "nx.example.test", "alias.example.test"])
        #expect(objects.map { $0["verdict"] as? String } == ["hijacked", "hijacked", "hijacked"])
    }
}
