import HostPin
import HostPinTestSupport
import Testing

/// Encrypted upstreams in the resolver's failover: each fault of `scripts/fault-doh` (DoH and DoT) is an
/// upstream failure like a plain server's, held down and passed over to the next upstream, with nothing
/// cached; mixed lists keep their preference order, hold-downs, probes and switch-back. Hold-downs run on
/// a ``ManualClock``.
@Suite(.enabled(if: EncryptedLabServer.current != nil, "the lab has no DoH/DoT server (LAB_DOH_URL)"))
struct EncryptedFailoverTests {
    /// One misbehaving server mode and the failure the resolver reports for it.
    struct Fault: Sendable, CustomTestStringConvertible {
        let transportProtocol: EncryptedFaultServer.TransportProtocol
        let mode: String
        let reason: UpstreamFailure.Reason

        var testDescription: String { "\(transportProtocol) \(mode)" }
    }

    static let faults: [Fault] = [
        Fault(transportProtocol: .doh, mode: "html", reason: .encrypted(.wrongContentType("text/html; charset=utf-8"))),
        Fault(transportProtocol: .doh, mode: "status-500", reason: .encrypted(.httpStatus(500))),
        Fault(transportProtocol: .doh, mode: "status-404", reason: .encrypted(.httpStatus(404))),
        Fault(transportProtocol: .doh, mode: "content-type", reason: .encrypted(.wrongContentType("application/octet-stream"))),
        Fault(transportProtocol: .doh, mode: "cut-short", reason: .encrypted(.replyCutShort)),
        Fault(transportProtocol: .doh, mode: "oversize", reason: .encrypted(.replyTooLong)),
        Fault(transportProtocol: .doh, mode: "empty", reason: .encrypted(.replyTooShort(octets: 0))),
        Fault(transportProtocol: .doh, mode: "stall", reason: .timeout),
        Fault(transportProtocol: .doh, mode: "other-name", reason: .badResponse),
        Fault(transportProtocol: .doh, mode: "wrong-id", reason: .badResponse),
        Fault(transportProtocol: .dot, mode: "silent", reason: .timeout),
        Fault(transportProtocol: .dot, mode: "close", reason: .encrypted(.connectionClosed)),
        Fault(transportProtocol: .dot, mode: "half-prefix", reason: .timeout),
    ]

    let lab: Lab
    let server: EncryptedLabServer

    init() throws {
        lab = try Lab.current()
        server = try #require(EncryptedLabServer.current)
    }

    private func configuration(_ upstreams: [Upstream], timeout: Duration = .seconds(2)) -> TrustedResolver.Configuration {
        // Fault servers of the test's own, which cannot answer DS/DNSKEY: DNSSEC off.
        var configuration = TrustedResolver.Configuration.ownServer(upstreams)
        configuration.timeout = timeout
        configuration.tries = 1
        return configuration
    }

    @Test(arguments: faults)
    func faultyEncryptedUpstreamIsPassedOverAndNothingIsCached(fault: Fault) async throws {
        let pki = try await EncryptedTestPKI.shared
        let faultServer = try await EncryptedFaultServer(fault.transportProtocol, mode: fault.mode, upstream: lab.trustedDNS, pki: pki)
        let faulty = Upstream(try faultServer.upstream(pki: pki))
        // The next upstream is encrypted too: the lab's DoT behind a faulty DoH, its DoH behind a faulty DoT.
        let next = Upstream(try server.upstream(dot: fault.transportProtocol == .doh))
        let www = try HostName.parse("www.example.test")

        let resolver = try TrustedResolver(configuration: configuration([faulty, next]), clock: ManualClock())
        let resolution = try await CachingResolver(upstream: resolver).resolve(www, family: .v4)
        #expect(resolution.upstream == next)
        #expect(resolution.ipAddresses == [IPAddress("127.0.0.10")!])
        #expect(resolver.health.status(of: faulty) == .heldDown(failures: 1, remaining: .seconds(1)))
        #expect(resolver.health.status(of: next) == .healthy)

        // Alone, the upstream's failure is named, and the cache in front of it stays empty.
        let alone = CachingResolver(upstream: try TrustedResolver(configuration: configuration([faulty])))
        await #expect(throws: ResolutionError.upstreamsFailed([UpstreamFailure(upstream: faulty, reason: fault.reason)])) {
            try await alone.resolve(www, family: .v4)
        }
        #expect(alone.cache.lookup(www, family: .v4) == nil)
        // Each resolution's query reached the server (the one that closes right after the handshake reads none).
        #expect(faultServer.queries == (fault.mode == "close" ? 0 : 2))
    }

    @Test func certificateProblemsAreUpstreamFailuresThatFailOver() async throws {
        let pki = try await EncryptedTestPKI.shared
        let faultServer = try await EncryptedFaultServer(.doh, mode: "relay", upstream: lab.trustedDNS, pki: pki)
        let untrusted = Upstream(try faultServer.upstream(trustCA: false, pki: pki))
        let pinned = Upstream(try faultServer.upstream(pins: [pki.otherPin], pki: pki))
        let otherName = Upstream(try faultServer.upstream(name: "other.example.test", pki: pki))
        let next = Upstream(try server.upstream(dot: true))
        let resolver = try TrustedResolver(configuration: configuration([untrusted, pinned, otherName, next]),
                                           clock: ManualClock())
        let resolution = try await resolver.resolve("www.example.test", family: .v4)
        #expect(resolution.upstream == next)
        for upstream in [untrusted, pinned, otherName] {
            #expect(resolver.health.status(of: upstream) == .heldDown(failures: 1, remaining: .seconds(1)))
        }
        #expect(faultServer.queries == 0)  // no query went out on a connection that failed its checks

        let alone = try TrustedResolver(configuration: configuration([untrusted, pinned, otherName]))
        let error = await #expect(throws: ResolutionError.self) { try await alone.resolve("www.example.test", family: .v4) }
        guard case .upstreamsFailed(let failures) = error, failures.count == 3 else {
            Issue.record("expected three upstream failures, got \(String(describing: error))")
            return
        }
        guard case .encrypted(.untrustedCertificate) = failures[0].reason else {
            Issue.record("expected an untrusted certificate, got \(failures[0])")
            return
        }
        #expect(failures[1].reason == .encrypted(.pinMismatch))
        guard case .encrypted(.certificateNameMismatch(let message)) = failures[2].reason else {
            Issue.record("expected a certificate for another name, got \(failures[2])")
            return
        }
        #expect(message.contains("other.example.test"))
        #expect(failures[1].description == "\(pinned): the upstream's public key matches none of its pins")
    }

    @Test func mixedListFailsOverFromDoHToDoTAndReturnsWhenDoHIsBack() async throws {
        let pki = try await EncryptedTestPKI.shared
        var doh = try await EncryptedFaultServer(.doh, mode: "relay", upstream: lab.trustedDNS, pki: pki)
        let port = doh.port
        let dohUpstream = Upstream(try doh.upstream(pki: pki))
        let dot = try await EncryptedFaultServer(.dot, mode: "relay", upstream: lab.trustedDNS, pki: pki)
        let dotUpstream = Upstream(try dot.upstream(pki: pki))
        let clock = ManualClock()
        let resolver = try TrustedResolver(configuration: configuration([dohUpstream, dotUpstream, lab.trustedDNS]),
                                           clock: clock)
        #expect(try await resolver.resolve("www.example.test", family: .v4).upstream == dohUpstream)

        // DoH down: DoT, the next in the list, answers (not the plain upstream after it).
        try await doh.stopAndWait()
        #expect(try await resolver.resolve("www.example.test", family: .v4).upstream == dotUpstream)
        #expect(resolver.health.status(of: dohUpstream) == .heldDown(failures: 1, remaining: .seconds(1)))
        let dotQueries = dot.queries

        // DoH back on its port: still held down, so DoT keeps answering until the hold-down runs out.
        doh = try await EncryptedFaultServer(.doh, mode: "relay", upstream: lab.trustedDNS, pki: pki, port: port)
        #expect(try await resolver.resolve("cdn.example.test", family: .v4).upstream == dotUpstream)
        #expect(doh.queries == 0)

        // The hold-down ran out: the next resolution probes DoH on the side, the probe's answer makes it
        // healthy, and traffic returns to it.
        clock.advance(by: .seconds(1))
        #expect(try await resolver.resolve("cdn.example.test", family: .v4).upstream == dotUpstream)
        try await waitUntil { resolver.health.status(of: dohUpstream) == .healthy }
        #expect(resolver.health.status(of: dohUpstream) == .healthy)
        let back = try await resolver.resolve("www.example.test", family: .v4)
        #expect(back.upstream == dohUpstream)
        #expect(back.ipAddresses == [IPAddress("127.0.0.10")!])
        #expect(doh.queries == 2)  // the probe, then the resolution
        #expect(dot.queries == dotQueries + 2)
    }

    @Test func encryptedUpstreamThatNeverAnswersFailsWithinTheBudget() async throws {
        let pki = try await EncryptedTestPKI.shared
        let stalling = try await EncryptedFaultServer(.doh, mode: "stall", upstream: nil, pki: pki)
        let upstream = Upstream(try stalling.upstream(pki: pki))
        var settings = configuration([upstream], timeout: .seconds(10))
        settings.budget = .milliseconds(800)
        let resolver = try TrustedResolver(configuration: settings)
        let (error, elapsed) = await timed {
            await #expect(throws: ResolutionError.self) { try await resolver.resolve("www.example.test", family: .any) }
        }
        // Two ends are right, whichever fires first: the budget timer (`.timeout`, "no trusted upstream answered
        // within 800 ms (…: timeout)"), or the exchange's own timeout, which the transport cuts to what is left
        // of the budget, a moment before it (`.upstreamsFailed`, "no trusted upstream answered: …: timeout").
        // Either way the one upstream timed out, and nothing else.
        let timedOut = UpstreamFailure(upstream: upstream, reason: .timeout)
        #expect(error == .timeout(budget: .milliseconds(800), [timedOut]) || error == .upstreamsFailed([timedOut]))
        #expect(elapsed < .seconds(3))  // the 800 ms budget, not the 10 s exchange timeout
        #expect(resolver.health.status(of: upstream) != .healthy)
    }

    @Test func cancelStopsAnEncryptedExchangeAtOnce() async throws {
        let pki = try await EncryptedTestPKI.shared
        let stalling = try await EncryptedFaultServer(.dot, mode: "silent", upstream: nil, pki: pki)
        let resolver = try TrustedResolver(configuration: configuration([Upstream(try stalling.upstream(pki: pki))],
                                                                        timeout: .seconds(10)))
        let task = Task { try await resolver.resolve("www.example.test", family: .any) }
        try await waitUntil { stalling.queries == 2 }
        let (result, elapsed) = await timed {
            task.cancel()
            return await task.result
        }
        #expect(throws: ResolutionError.cancelled) { try result.get() }
        #expect(elapsed < .seconds(2))
    }
}
