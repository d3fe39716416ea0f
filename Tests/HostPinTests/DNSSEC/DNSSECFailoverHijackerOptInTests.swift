@testable import HostPin
import HostPinTestSupport
import Testing

/// The lab's hijacker (dnsmasq: example.test → 127.0.0.66, no signatures) first in the list of a
/// validating resolver: its answer is bogus (the signed zone's RRSIGs are missing) and the signed lab NSD
/// after it answers, secure. Opted in to asking the hijacker (scripts/test runs it last).
@Suite struct DNSSECFailoverHijackerOptInTests {
    /// The signed lab and its validating resolvers, as ``DNSSECResolverTests`` has them.
    let base: DNSSECResolverTests
    var lab: Lab { base.lab }
    var signed: Upstream { base.signed }

    init() throws { base = try DNSSECResolverTests() }

    func resolver(_ upstreams: [Upstream]) throws -> TrustedResolver { try base.resolver(upstreams) }

    @Test func aHijackerWithoutSignaturesIsBogusAndTheNextUpstreamAnswersSecure() async throws {
        let name = try HostName.parse("www.example.test")
        let alone = try resolver([lab.hijackDNS])
        do {
            let forged = try await alone.resolve(name, family: .v4)
            Issue.record("the hijacker's answer was taken: \(forged.ipAddresses), \(String(describing: forged.dnssec))")
        } catch .dnssecBogus(let reason, let failures) {
            #expect(failures == [UpstreamFailure(upstream: lab.hijackDNS, reason: .dnssecBogus(reason))])
            #expect(reason.rrset == "www.example.test. A", "\(reason)")
            #expect(reason.problem == .signaturesMissing, "\(reason)")
            #expect(reason.description.contains("does the upstream ignore the DO bit?"))
        } catch {
            Issue.record("\(error)")
        }
        let resolver = try resolver([lab.hijackDNS, signed])
        let resolution = try await resolver.resolve(name, family: .v4)
        #expect(resolution.ipAddresses == [IPAddress("127.0.0.10")!])
        #expect(resolution.dnssec == .secure)
        #expect(resolution.upstream == signed)
        #expect(resolver.metrics.snapshot(of: lab.hijackDNS)?.failures[.bogus] == 1)
    }

    /// The hijacker's bogus answer is kept 60 s for that upstream: asked again, its answer is not
    /// validated again (no chain query goes to it), and the next upstream still answers.
    @Test func aBogusAnswerIsNotValidatedAgainAndTheNextUpstreamIsStillAsked() async throws {
        let resolver = try resolver([lab.hijackDNS, signed])
        let name = try HostName.parse("www.example.test")
        for _ in 1...3 {
            let resolution = try await resolver.resolve(name, family: .v4)
            #expect(resolution.upstream == signed)
            #expect(resolution.dnssec == .secure)
        }
        #expect(resolver.validators[0].chainQueriesSent == 1)
        #expect(resolver.metrics.snapshot(of: lab.hijackDNS)?.failures[.bogus] == 3)
    }
}
