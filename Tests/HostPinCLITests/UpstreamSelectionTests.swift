import Foundation
import HostPinTestSupport
import Testing

/// Where the trusted upstreams come from: `--server` flags win over `HOSTPIN_UPSTREAMS`.
@Suite struct UpstreamSelectionTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    /// The `upstream` field of the one JSON object `result` printed.
    private func upstream(_ result: ProcessRunner.Result) throws -> String? {
        let object = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8))
        return try #require(object as? [String: Any])["upstream"] as? String
    }

    @Test func environmentIsUsedWithoutServerFlags() async throws {
        let result = try await HostPinBinary.run(["lookup", "www.example.test", "--json", "--timeout", "1"],
                                           environment: ["HOSTPIN_UPSTREAMS": "\(lab.trustedDNS2)"])
        #expect(result.status == 0)
        #expect(try upstream(result) == "\(lab.trustedDNS2)")
    }

    @Test func environmentListIsTriedInOrder() async throws {
        let list = "\(SilentUpstream.closedPort), \(lab.trustedDNS2)"
        let result = try await HostPinBinary.run(["lookup", "www.example.test", "--json", "--timeout", "1"],
                                           environment: ["HOSTPIN_UPSTREAMS": list])
        #expect(result.status == 0)
        #expect(try upstream(result) == "\(lab.trustedDNS2)")
    }

    @Test func serverFlagWinsOverTheEnvironment() async throws {
        let result = try await HostPinBinary.run(["lookup", "www.example.test", "--json", "--timeout", "1",
                                            "--server", "\(lab.trustedDNS)"],
                                           environment: ["HOSTPIN_UPSTREAMS": SilentUpstream.closedPort])
        #expect(result.status == 0)
        #expect(try upstream(result) == "\(lab.trustedDNS)")
    }

    @Test func invalidEnvironmentIsAUsageError() async throws {
        let result = try await HostPinBinary.run(["lookup", "www.example.test"],
                                           environment: ["HOSTPIN_UPSTREAMS": "\(lab.trustedDNS),dns.example"])
        #expect(result.status == 2)
        #expect(result.standardError == """
            hostpin: error: invalid HOSTPIN_UPSTREAMS: 'dns.example' is not an upstream (expected IP or IP:PORT, IPv6 as [IP]:PORT, https://NAME[:PORT]/PATH for DNS over HTTPS or tls://NAME[:PORT] for DNS over TLS).
            See 'hostpin lookup --help'.

            """)
    }
}
