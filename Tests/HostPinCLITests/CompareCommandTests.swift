import Foundation
import HostPinTestSupport
import Testing

/// `hostpin compare`: both answers side by side, the verdict line and its exit code. Several tests ask the
/// hijacker as the local resolver on purpose: the name matches `HijackerOptIn`, the pattern `scripts/test`
/// lets reach the hijacker.
@Suite struct CompareCommandHijackerOptInTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    private func compare(_ name: String, local: String, server: String? = nil, _ extra: String...) async throws
        -> ProcessRunner.Result
    {
        try await HostPinBinary.run(["compare", name, "--server", server ?? "\(lab.trustedDNS)", "--local", local,
                               "--timeout", "1"] + extra)
    }

    @Test func hijackerAnswerIsHijacked() async throws {
        let result = try await compare("www.example.test", local: "\(lab.hijackDNS)")
        #expect(result.status == 4)
        #expect(result.standardOutput == """
            trusted (\(lab.trustedDNS)): 127.0.0.10
            local (\(lab.hijackDNS)): 127.0.0.66
            verdict: hijacked

            """)
        #expect(result.standardError == "")
    }

    @Test func anotherTrustedServerIsConsistent() async throws {
        let result = try await compare("www.example.test", local: "\(lab.trustedDNS2)")
        #expect(result.status == 0)
        #expect(result.standardOutput == """
            trusted (\(lab.trustedDNS)): 127.0.0.10
            local (\(lab.trustedDNS2)): 127.0.0.10
            verdict: consistent

            """)
    }

    @Test func answerForANonexistentNameIsHijacked() async throws {
        let result = try await compare("nx.example.test", local: "\(lab.hijackDNS)")
        #expect(result.status == 4)
        #expect(result.standardOutput == """
            trusted (\(lab.trustedDNS)): nx.example.test: NXDOMAIN (the name does not exist)
            local (\(lab.hijackDNS)): 127.0.0.66
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
                trusted (\(lab.trustedDNS)): 127.0.0.10
                local (\(silent)): the local resolver did not answer: \(silent): timeout
                verdict: inconclusive

                """)
        }
    }

    @Test func closedLocalPortIsInconclusive() async throws {
        let result = try await compare("www.example.test", local: SilentUpstream.closedPort)
        #expect(result.status == 5)
        #expect(result.standardOutput.hasSuffix("verdict: inconclusive\n"))
    }

    @Test func failingTrustedSideExitsThreeWithoutAVerdict() async throws {
        try await SilentUpstream.with { silent in
            let result = try await compare("www.example.test", local: "\(lab.hijackDNS)", server: silent)
            #expect(result.status == 3)
            #expect(result.standardOutput == """
                trusted (\(silent)): no trusted upstream answered: \(silent): timeout
                local (\(lab.hijackDNS)): 127.0.0.66

                """)
            #expect(result.standardError == "hostpin: no trusted upstream answered: \(silent): timeout\n")
        }
    }

    @Test func jsonHoldsBothSidesAndTheVerdict() async throws {
        let result = try await compare("www.example.test", local: "\(lab.hijackDNS)", "--json")
        #expect(result.status == 4)
        let lines = result.standardOutput.split(separator: "\n")
        #expect(lines.count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["name", "trusted", "local", "verdict"])
        #expect(object["name"] as? String == "www.example.test")
        #expect(object["verdict"] as? String == "hijacked")
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
        #expect((object["trusted"] as? [String: Any])?["code"] as? String == "upstreams_failed")
    }

    @Test func secondNameIsAUsageError() async throws {
        let result = try await compare("www.example.test", local: "\(lab.hijackDNS)", "cdn.example.test")
        #expect(result.status == 2)
        #expect(result.standardError == "hostpin: error: unexpected argument 'cdn.example.test'.\nSee 'hostpin compare --help'.\n")
    }
}
