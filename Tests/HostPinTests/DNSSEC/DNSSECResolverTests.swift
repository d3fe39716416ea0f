import CLDNS
import Foundation
@testable import HostPin
import HostPinTestSupport
import Testing

/// DNSSEC validation wired into ``TrustedResolver`` (validate or report mode, the lab's trust anchor), on
/// the signed lab NSD's real answers (LAB_SIGNED_DNS): every row of ``DNSSECLabServerTests`` gets its
/// verdict (delv's, ``SignedLabTests``, but three opt-out denials); bogus answers fail over or fail; chains come through the same upstream with DO and CD,
/// and the key and bogus caches spare the second name its queries and checks.
@Suite struct DNSSECResolverTests {
    let lab: Lab
    let signed: Upstream
    let anchors: TrustAnchors

    init() throws {
        lab = try Lab.current()
        let world = try lab.signedWorld()
        (signed, anchors) = (world.server, world.anchors)
    }

    func resolver(_ upstreams: [Upstream], mode: DNSSECMode = .validate, insecure: [HostName] = [])
        throws -> TrustedResolver
    {
        var configuration = TrustedResolver.Configuration(upstreams: upstreams)
        configuration.dnssec = DNSSECConfiguration(mode: mode, trustAnchors: anchors, insecureDomains: insecure)
        return try TrustedResolver(configuration: configuration)
    }

    /// The status HostPin gives the row's question: A through ``TrustedResolver/resolveDetailed(_:family:)``,
    /// other types through ``TrustedResolver/forwardValidated(_:)``; `nil` for bogus (the thrown reason
    /// in `bogus`).
    static func status(of row: DNSSECLabServerTests.Row, by resolver: TrustedResolver)
        async throws -> (status: DNSSECStatus?, negative: NegativeAnswer.Kind?, bogus: BogusReason?)
    {
        do {
            if row.type == DNSSECRecord.Kind.a {
                let outcome = try await resolver.resolveDetailed(try HostName.parse(row.name), family: .v4)
                switch outcome.answer {
                case .addresses(let resolution): return (resolution.dnssec, nil, nil)
                case .negative(let negative): return (negative.dnssec, negative.kind, nil)
                }
            }
            let answer = try await resolver.forwardValidated(try #require(ForwardedQuestion(name: row.name, type: row.type)))
            return (answer.dnssec, nil, nil)
        } catch let error as ResolutionError {
            guard case .dnssecBogus(let reason, _) = error else { throw error }
            return (nil, nil, reason)
        }
    }

    /// Whether `status`/`bogus` is the row's verdict.
    static func matches(_ row: DNSSECLabServerTests.Row, _ status: DNSSECStatus?, _ bogus: BogusReason?) -> Bool {
        switch row.verdict {
        case "secure": status == .secure
        case "insecure": status == .insecure
        default: bogus != nil
        }
    }

    /// HostPin's verdict for every row: delv's (``SignedLabTests``) but for the three denials in an
    /// opt-out span, insecure as for Unbound (``DNSSECLabServerTests`` lists them).
    @Test(arguments: DNSSECLabServerTests.rows)
    func everyLabNameGetsHostPinsVerdict(_ row: DNSSECLabServerTests.Row) async throws {
        let (status, negative, bogus) = try await Self.status(of: row, by: try resolver([signed]))
        #expect(Self.matches(row, status, bogus), "\(String(describing: status)) \(String(describing: bogus))")
        if row.name.hasPrefix("nx."), row.verdict == "secure" { #expect(negative == .nxdomain) }
    }

    /// `any` validates the A answer and the AAAA NODATA; the secure NODATA (its TTL 60 s, the SOA minimum)
    /// does not cut the addresses' 3600 s (before: TTL 60, seen through `hostpin lookup`).
    @Test func anyKeepsTheAddressesTTLBesideASecureNODATA() async throws {
        let resolution = try await resolver([signed]).resolve(try HostName.parse("www.example.test"), family: .any)
        #expect(resolution.dnssec == .secure)
        #expect(resolution.ipAddresses.map(\.description) == ["127.0.0.10"])
        #expect(resolution.ttl == 3600)
    }

    @Test func aBogusNameFailsNamingTheRRsetAndProblemInValidateMode() async throws {
        let name = try HostName.parse("modified.example.test")
        await #expect {
            try await resolver([signed]).resolve(name, family: .v4)
        } throws: { error in
            guard case .dnssecBogus(let reason, let failures) = error as? ResolutionError else { return false }
            guard case .signatureInvalid = reason.problem else { return false }
            return reason.rrset == "modified.example.test. A" && failures.count == 1
                && failures.first?.reason == .dnssecBogus(reason)
        }
    }

    @Test func reportModeHandsTheBogusAnswerOutMarked() async throws {
        let resolution = try await resolver([signed], mode: .report).resolve(try HostName.parse("modified.example.test"),
                                                                             family: .v4)
        guard case .bogus(let reason) = resolution.dnssec else {
            Issue.record("\(String(describing: resolution.dnssec))")
            return
        }
        #expect(reason.rrset == "modified.example.test. A")
        #expect(!resolution.addresses.isEmpty)
    }

    @Test func bothFamiliesAreValidatedTogether() async throws {
        let resolver = try resolver([signed])
        let outcome = try await resolver.resolveDetailed(try HostName.parse("www.example.test"), family: .any)
        guard case .addresses(let resolution) = outcome.answer else {
            Issue.record("\(outcome)")
            return
        }
        #expect(resolution.dnssec == .secure)
        #expect(resolution.ipAddresses.contains(IPAddress("127.0.0.10")!))
    }

    @Test func theUntrustedFallbacksAnswerIsValidatedTheSameWay() async throws {
        let failing = try await FaultServer(mode: .servfail, upstream: nil)
        let untrusted = try await FaultServer(mode: .answer, upstream: signed)
        var configuration = TrustedResolver.Configuration(upstreams: [failing.address])
        configuration.untrustedFallback = untrusted.address
        // The lab's addresses are loopback ones, which the detector would refuse from an untrusted server.
        configuration.untrustedFallbackDetector = HijackDetector(ordinary: [IPAddressRange("127.0.0.0/8")!])
        configuration.dnssec = DNSSECConfiguration(mode: .validate, trustAnchors: anchors)
        let resolver = try TrustedResolver(configuration: configuration)
        let secure = try await resolver.resolve(try HostName.parse("www.example.test"), family: .v4)
        #expect(secure.source == .untrusted)
        #expect(secure.dnssec == .secure)
        await #expect {
            try await resolver.resolve(try HostName.parse("modified.example.test"), family: .v4)
        } throws: { error in
            guard case .dnssecBogus(let reason, let failures) = error as? ResolutionError else { return false }
            return failures == [UpstreamFailure(upstream: failing.address, reason: .servfail),
                                UpstreamFailure(upstream: untrusted.address, reason: .dnssecBogus(reason))]
        }
    }

    @Test func chainQueriesCarryDOAndCDAndTheKeyCacheSparesTheSecondName() async throws {
        let relay = try DelayingRelay(target: signed, delay: .zero)
        defer { relay.stop() }
        let resolver = try resolver([relay.address])
        _ = try await resolver.resolve(try HostName.parse("www.example.test"), family: .v4)
        let cold = relay.queries.compactMap(SentDNSSECQuery.init)
        #expect(cold.count == relay.queries.count)
        #expect(cold.allSatisfy { $0.dnssecOK && $0.checkingDisabled }, "\(cold)")
        let chain = cold.filter { $0.type == DNSSECRecord.Kind.dnskey || $0.type == DNSSECRecord.Kind.ds }
        #expect(Set(chain.map(\.description)) == [". DNSKEY", "test. DNSKEY", "test. DS", "example.test. DNSKEY",
                                                  "example.test. DS"], "\(chain)")
        let before = relay.queries.count
        let second = try await resolver.resolve(try HostName.parse("x.wild.example.test"), family: .v4)
        #expect(second.dnssec == .secure)
        let warm = relay.queries.dropFirst(before).compactMap(SentDNSSECQuery.init)
        #expect(warm.map(\.description) == ["x.wild.example.test. A"], "\(warm)")
    }

    @Test func theSameBogusNameTwiceIsValidatedOnce() async throws {
        let resolver = try resolver([signed])
        let name = try HostName.parse("modified.example.test")
        for _ in 1...2 {
            await #expect(throws: ResolutionError.self) { try await resolver.resolve(name, family: .v4) }
        }
        let checksAfterTwo = resolver.validators[0].signatureChecks
        await #expect(throws: ResolutionError.self) { try await resolver.resolve(name, family: .v4) }
        #expect(resolver.validators[0].signatureChecks == checksAfterTwo)
        // The first resolution checked the chain and the RRset; neither later one checked anything.
        let fresh = try self.resolver([signed])
        await #expect(throws: ResolutionError.self) { try await fresh.resolve(name, family: .v4) }
        #expect(fresh.validators[0].signatureChecks == checksAfterTwo)
    }

    /// What validation costs one name: cold, the chain from the root (DNSKEY ., DS and DNSKEY of test.
    /// and example.test.: five checks) and the answer's RRSIG, six; warm (the key cache holds the zones'
    /// keys), the answer's RRSIG alone. The times per name (cold, warm, off) are printed for the record.
    @Test func coldValidationChecksTheChainWarmOnlyTheAnswer() async throws {
        let name = try HostName.parse("www.example.test")
        let rounds = 50
        var cold = Duration.zero
        for _ in 0..<rounds {
            let fresh = try resolver([signed])
            let start = ContinuousClock.now
            _ = try await fresh.resolve(name, family: .v4)
            cold += ContinuousClock.now - start
            #expect(fresh.validators[0].signatureChecks == 6)
            #expect(fresh.validators[0].chainQueriesSent == 5)
        }
        let warm = try resolver([signed])
        _ = try await warm.resolve(name, family: .v4)
        let start = ContinuousClock.now
        for _ in 0..<rounds { #expect(try await warm.resolve(name, family: .v4).dnssec == .secure) }
        let warmTime = ContinuousClock.now - start
        #expect(warm.validators[0].signatureChecks == 6 + rounds)
        #expect(warm.validators[0].chainQueriesSent == 5)
        var unvalidated = TrustedResolver.Configuration(upstreams: [signed])
        unvalidated.dnssec = .off
        let off = try TrustedResolver(configuration: unvalidated)
        let offStart = ContinuousClock.now
        for _ in 0..<rounds { _ = try await off.resolve(name, family: .v4) }
        let offTime = ContinuousClock.now - offStart
        print("DNSSEC cost per name (\(rounds) rounds, www.example.test A, lab NSD): cold \(cold / rounds), "
            + "warm \(warmTime / rounds), off \(offTime / rounds)")
    }

    /// The chain queries run within the resolution's budget: six round trips of 60 ms (the answer, then
    /// five DNSKEY and DS queries) do not fit in 200 ms, and the resolution ends as a timeout, not bogus.
    @Test func chainQueriesRunWithinTheResolutionsBudget() async throws {
        let relay = try DelayingRelay(target: signed, delay: .milliseconds(60))
        defer { relay.stop() }
        var configuration = TrustedResolver.Configuration(upstreams: [relay.address])
        configuration.budget = .milliseconds(200)
        configuration.dnssec = DNSSECConfiguration(mode: .validate, trustAnchors: anchors)
        let resolver = try TrustedResolver(configuration: configuration)
        await #expect {
            try await resolver.resolve(try HostName.parse("www.example.test"), family: .v4)
        } throws: { error in
            guard case .timeout = error as? ResolutionError else { return false }
            return true
        }
        #expect(resolver.validators[0].chainQueriesSent < 5)
    }

    /// Many validations at once through one upstream share its caches without a lock held across a
    /// query: every one ends with its row's verdict.
    @Test func concurrentValidationsEachGetTheirVerdict() async throws {
        let resolver = try resolver([signed])
        let rows = DNSSECLabServerTests.rows.filter { $0.type == DNSSECRecord.Kind.a }
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<4 {
                for row in rows {
                    group.addTask {
                        let (status, _, bogus) = try await Self.status(of: row, by: resolver)
                        return Self.matches(row, status, bogus)
                    }
                }
            }
            var results: [Bool] = []
            for try await result in group { results.append(result) }
            #expect(results.count == rows.count * 4)
            #expect(results.allSatisfy { $0 })
        }
    }

    /// A hundred cold validations at once under one zone ask each DNSKEY and DS RRset of the chain once
    /// (``ChainFlights``): five chain queries at the upstream, not one set per name. Each name still gets
    /// its own verdict (a secure NXDOMAIN).
    @Test func coldValidationsTogetherAskEachChainRRsetOnce() async throws {
        let resolver = try resolver([signed])
        let statuses = try await withThrowingTaskGroup(of: DNSSECStatus?.self) { group in
            for index in 0..<100 {
                group.addTask {
                    let outcome = try await resolver.resolveDetailed(try HostName.parse("nx\(index).example.test"), family: .v4)
                    guard case .negative(let negative) = outcome.answer, negative.kind == .nxdomain else { return nil }
                    return negative.dnssec
                }
            }
            var statuses: [DNSSECStatus?] = []
            for try await status in group { statuses.append(status) }
            return statuses
        }
        #expect(statuses.count == 100)
        #expect(statuses.allSatisfy { $0 == .secure })
        #expect(resolver.validators[0].chainQueriesSent == 5)
    }

    @Test func aNameUnderAnInsecureDomainIsNotValidated() async throws {
        let resolver = try resolver([signed], insecure: [try HostName.parse("example.test")])
        let resolution = try await resolver.resolve(try HostName.parse("modified.example.test"), family: .v4)
        #expect(resolution.dnssec == .insecure)
        #expect(resolver.validators[0].chainQueriesSent == 0)
    }

    @Test func offModeSendsNeitherBitAndMarksNothing() async throws {
        let relay = try DelayingRelay(target: signed, delay: .zero)
        defer { relay.stop() }
        var configuration = TrustedResolver.Configuration(upstreams: [relay.address])
        configuration.dnssec = .off
        let resolver = try TrustedResolver(configuration: configuration)
        let resolution = try await resolver.resolve(try HostName.parse("modified.example.test"), family: .v4)
        #expect(resolution.dnssec == nil)
        let queries = relay.queries.compactMap(SentDNSSECQuery.init)
        #expect(queries.map(\.description) == ["modified.example.test. A"])
        #expect(queries.allSatisfy { !$0.dnssecOK && !$0.checkingDisabled })
    }

    @Test func aForwardedReplyIsAskedWithDOAndCDAndKeepsItsProof() async throws {
        let relay = try DelayingRelay(target: signed, delay: .zero)
        defer { relay.stop() }
        let question = try #require(ForwardedQuestion(name: "www.example.test", type: 16))
        let answer = try await resolver([relay.address]).forwardValidated(question)
        #expect(answer.dnssec == .secure)
        #expect(answer.secureTTL != nil)
        let queries = relay.queries.compactMap(SentDNSSECQuery.init)
        #expect(queries.first?.description == "www.example.test. TXT")
        #expect(queries.allSatisfy { $0.dnssecOK && $0.checkingDisabled }, "\(queries)")
        // The NODATA proof a DO client behind the stub needs: the NSEC and its RRSIG, the SOA's RRSIG.
        let reply = try #require(DNSReply(wire: answer.reply, readingDNSSEC: true))
        let types = Set(reply.signedAuthority.map(\.type))
        #expect(types.isSuperset(of: [DNSSECRecord.Kind.nsec, DNSSECRecord.Kind.rrsig, DNSSECRecord.Kind.soa]), "\(types)")
    }

    @Test func aForwardedBogusReplyFails() async throws {
        let question = try #require(ForwardedQuestion(name: "modified.example.test", type: 1))
        await #expect {
            try await resolver([signed]).forwardValidated(question)
        } throws: { error in
            guard case .dnssecBogus(let reason, _) = error as? ResolutionError else { return false }
            return reason.rrset == "modified.example.test. A"
        }
        let reported = try await resolver([signed], mode: .report).forwardValidated(question)
        guard case .bogus = reported.dnssec else {
            Issue.record("\(String(describing: reported.dnssec))")
            return
        }
    }
}

/// A query as the relay saw it, read with ldns: its question and the DNSSEC bits.
struct SentDNSSECQuery: CustomStringConvertible {
    let name: String
    let type: UInt16
    let dnssecOK: Bool
    let checkingDisabled: Bool

    init?(_ wire: [UInt8]) {
        var parsed: UnsafeMutablePointer<ldns_pkt>?
        guard wire.withUnsafeBufferPointer({ ldns_wire2pkt(&parsed, $0.baseAddress, $0.count) }) == LDNS_STATUS_OK,
              let packet = parsed
        else { return nil }
        defer { ldns_pkt_free(packet) }
        guard let question = ldns_rr_list_rr(ldns_pkt_question(packet), 0), let owner = ldns_rr_owner(question),
              let text = ldns_rdf2str(owner)
        else { return nil }
        defer { free(text) }
        name = String(cString: text)
        type = UInt16(truncatingIfNeeded: ldns_rr_get_type(question).rawValue)
        dnssecOK = ldns_pkt_edns_do(packet)
        checkingDisabled = ldns_pkt_cd(packet)
    }

    var description: String { "\(name) \(RRset.typeName(type))" }
}
