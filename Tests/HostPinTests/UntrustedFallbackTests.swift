import HostPin
import HostPinTestSupport
import Testing

/// The opt-in untrusted fallback: asked only after every trusted upstream failed, its answers marked
/// ``Resolution/Source/untrusted`` and never cached. The "untrusted" server here is a `scripts/fault-dns`
/// instance, so these tests send nothing to the lab's hijacker (see ``UntrustedFallbackHijackerOptInTests``).
@Suite struct UntrustedFallbackTests {
    let lab: Lab

    init() throws {
        lab = try Lab.current()
    }

    @Test func noFallbackUnlessConfigured() async throws {
        let failing = try await FaultServer(mode: .servfail, upstream: nil)
        let configuration = TrustedResolver.Configuration.ownServer([failing.address])
        #expect(configuration.untrustedFallback == nil)
        let resolver = try TrustedResolver(configuration: configuration)
        await #expect(throws: ResolutionError.upstreamsFailed([UpstreamFailure(upstream: failing.address, reason: .servfail)])) {
            try await resolver.resolve("www.example.test", family: .v4)
        }
    }

    @Test func fallbackIsNotAskedWhileATrustedUpstreamAnswers() async throws {
        let failing = try await FaultServer(mode: .servfail, upstream: nil)
        let untrusted = try await FaultServer(mode: .answer, upstream: lab.trustedDNS2)
        var configuration = TrustedResolver.Configuration.ownServer([failing.address, lab.trustedDNS])
        configuration.untrustedFallback = untrusted.address
        let resolver = try TrustedResolver(configuration: configuration)
        let resolution = try await resolver.resolve("www.example.test", family: .v4)
        #expect(resolution.upstream == lab.trustedDNS)
        #expect(resolution.source == .upstream)
        #expect(untrusted.queries == [])
    }

    @Test func fallbackAnswersAfterEveryTrustedUpstreamFailedMarkedUntrustedAndNeverCached() async throws {
        let failing = try await FaultServer(mode: .refused, upstream: nil)
        let untrusted = try await FaultServer(mode: .answer, upstream: lab.trustedDNS2)
        var configuration = TrustedResolver.Configuration.ownServer([failing.address])
        configuration.untrustedFallback = untrusted.address
        // The lab answers on loopback, a special-purpose block the fallback refuses unless told it is ordinary.
        configuration.untrustedFallbackDetector = HijackDetector(ordinary: [IPAddressRange("127.0.0.0/8")!])
        let caching = CachingResolver(upstream: try TrustedResolver(configuration: configuration))
        for _ in 0..<2 {
            let resolution = try await caching.resolve("www.example.test", family: .v4)
            #expect(resolution.source == .untrusted)
            #expect(resolution.upstream == untrusted.address)
            #expect(resolution.ipAddresses.map(\.description) == ["127.0.0.10"])
        }
        #expect(caching.cache.count == 0)
        #expect(untrusted.queries.count == 2)  // asked again: nothing was cached
    }

    @Test func failingFallbackIsListedAfterTheTrustedFailures() async throws {
        let failing = try await FaultServer(mode: .servfail, upstream: nil)
        let untrusted = try await FaultServer(mode: .refused, upstream: nil)
        var configuration = TrustedResolver.Configuration.ownServer([failing.address])
        configuration.untrustedFallback = untrusted.address
        let resolver = try TrustedResolver(configuration: configuration)
        await #expect(throws: ResolutionError.upstreamsFailed([
            UpstreamFailure(upstream: failing.address, reason: .servfail),
            UpstreamFailure(upstream: untrusted.address, reason: .refused),
        ])) {
            try await resolver.resolve("www.example.test", family: .v4)
        }
    }
}

/// The fallback pointed at the lab's hijacker on purpose, to show what an opted-in caller gets when every
/// trusted upstream fails: the lie refused when it speaks for itself (a loopback address; an address on
/// the known list), else handed out marked untrusted. Its name matches `HijackerOptIn`, the pattern
/// `scripts/test` runs after it has checked that no other test sent the hijacker a query.
@Suite(.serialized) struct UntrustedFallbackHijackerOptInTests {
    @Test func fallbackToTheHijackerIsRefusedForItsLoopbackAddress() async throws {
        let lab = try Lab.current()
        let failing = try await FaultServer(mode: .servfail, upstream: nil)
        var configuration = TrustedResolver.Configuration.ownServer([failing.address])
        configuration.untrustedFallback = lab.hijackDNS
        let resolver = try TrustedResolver(configuration: configuration)
        await #expect(throws: ResolutionError.upstreamsFailed([
            UpstreamFailure(upstream: failing.address, reason: .servfail),
            UpstreamFailure(upstream: lab.hijackDNS, reason: .hijackedAnswer([HijackReason(.specialRange,
                "the answer points into special-purpose blocks (RFC 6890), and no trusted answer vouches for it: "
                    + "127.0.0.66 in 127.0.0.0/8 (loopback, RFC 1122)")])),
        ])) {
            try await resolver.resolve("www.example.test", family: .v4)
        }
    }

    @Test func fallbackToTheHijackerIsRefusedForAKnownAddress() async throws {
        let lab = try Lab.current()
        let failing = try await FaultServer(mode: .servfail, upstream: nil)
        var configuration = TrustedResolver.Configuration.ownServer([failing.address])
        configuration.untrustedFallback = lab.hijackDNS
        let list = try HijackList(contentsOf: Lab.repositoryRoot.appendingPathComponent("examples/hijack-list.txt").path)
        configuration.untrustedFallbackDetector = HijackDetector(ordinary: [IPAddressRange("127.0.0.0/8")!],
                                                                 knownHijackAddresses: list)
        let resolver = try TrustedResolver(configuration: configuration)
        do throws(ResolutionError) {
            let resolution = try await resolver.resolve("www.example.test", family: .v4)
            Issue.record("the hijacker's answer was handed out: \(resolution.ipAddresses)")
        } catch {
            #expect(error.description == "no trusted upstream answered: \(failing.address): SERVFAIL; \(lab.hijackDNS): "
                + "its answer looks hijacked, so it was refused (known-hijack-address: on the known hijack list: "
                + "127.0.0.66 matches 127.0.0.66 (line 12: lab hijacker's page))")
        }
    }

    @Test func fallbackToTheHijackerWithLoopbackOrdinaryIsMarkedUntrusted() async throws {
        let lab = try Lab.current()
        let failing = try await FaultServer(mode: .servfail, upstream: nil)
        var configuration = TrustedResolver.Configuration.ownServer([failing.address])
        configuration.untrustedFallback = lab.hijackDNS
        configuration.untrustedFallbackDetector = HijackDetector(ordinary: [IPAddressRange("127.0.0.0/8")!])
        let resolver = try TrustedResolver(configuration: configuration)
        let resolution = try await resolver.resolve("www.example.test", family: .v4)
        #expect(resolution.ipAddresses.map(\.description) == ["127.0.0.66"])
        #expect(resolution.source == .untrusted)
        #expect(resolution.upstream == lab.hijackDNS)
    }
}
