import HostPin
import HostPinTestSupport
import Testing

/// The opted-in untrusted fallback never hands out an answer its ``HijackDetector`` calls hijacked: the
/// resolution fails instead and says why. The fallback is a dnsmasq of each test's own (never the lab's
/// hijacker; ``UntrustedFallbackHijackerOptInTests`` asks that one).
@Suite struct HijackDetectorFallbackTests {
    private func resolver(fallback: Upstream, detector: HijackDetector? = nil) async throws -> (TrustedResolver, FaultServer) {
        let failing = try await FaultServer(mode: .servfail, upstream: nil)
        var configuration = TrustedResolver.Configuration.ownServer([failing.address])  // a fault server of its own
        configuration.untrustedFallback = fallback
        if let detector { configuration.untrustedFallbackDetector = detector }
        return (try TrustedResolver(configuration: configuration), failing)
    }

    @Test func privateAddressFromTheFallbackFailsAndSaysWhy() async throws {
        let dnsmasq = try await DnsmasqServer(["--address=/example.test/10.0.0.1"])
        let (resolver, failing) = try await resolver(fallback: dnsmasq.address)
        await #expect(throws: ResolutionError.upstreamsFailed([
            UpstreamFailure(upstream: failing.address, reason: .servfail),
            UpstreamFailure(upstream: dnsmasq.address, reason: .hijackedAnswer([HijackReason(.specialRange,
                "the answer points into special-purpose blocks (RFC 6890), and no trusted answer vouches for it: "
                    + "10.0.0.1 in 10.0.0.0/8 (private use, RFC 1918)")])),
        ])) {
            try await resolver.resolve("www.example.test", family: .v4)
        }
    }

    @Test func knownHijackAddressFromTheFallbackFails() async throws {
        let dnsmasq = try await DnsmasqServer(["--address=/example.test/127.0.0.99"])
        let list = try HijackList(parsing: Array("127.0.0.96/30 # a captive portal\n".utf8), source: "list")
        let (resolver, _) = try await resolver(fallback: dnsmasq.address,
                                               detector: HijackDetector(ordinary: [IPAddressRange("127.0.0.0/8")!],
                                                                        knownHijackAddresses: list))
        do throws(ResolutionError) {
            let resolution = try await resolver.resolve("www.example.test", family: .v4)
            Issue.record("handed out \(resolution.ipAddresses)")
        } catch {
            guard case .upstreamsFailed(let failures) = error else { Issue.record("\(error)"); return }
            #expect(failures.last == UpstreamFailure(upstream: dnsmasq.address, reason: .hijackedAnswer([
                HijackReason(.knownHijackAddress, "on the known hijack list: 127.0.0.99 matches 127.0.0.96/30 (line 1: a captive portal)"),
            ])))
        }
    }

    @Test func ordinaryAddressFromTheFallbackIsHandedOutMarkedUntrusted() async throws {
        let dnsmasq = try await DnsmasqServer(["--address=/example.test/127.0.0.10"])
        let (resolver, _) = try await resolver(fallback: dnsmasq.address,
                                               detector: HijackDetector(ordinary: [IPAddressRange("127.0.0.0/8")!]))
        let resolution = try await resolver.resolve("www.example.test", family: .v4)
        #expect(resolution.ipAddresses.map(\.description) == ["127.0.0.10"])
        #expect(resolution.source == .untrusted)
        #expect(resolution.upstream == dnsmasq.address)
    }

    @Test func negativeAnswerFromTheFallbackIsStillAnAnswer() async throws {
        let dnsmasq = try await DnsmasqServer(["--address=/example.test/"])
        let (resolver, _) = try await resolver(fallback: dnsmasq.address)
        await #expect(throws: ResolutionError.nxdomain(try HostName.parse("www.example.test"))) {
            try await resolver.resolve("www.example.test", family: .v4)
        }
    }
}
