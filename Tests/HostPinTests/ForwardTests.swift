import CLDNS
@testable import HostPin
import HostPinTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// ``TrustedResolver/forward(_:)`` against real servers: the lab's NSD (zone example.test, with MX, TXT
/// and SRV records), `scripts/fault-dns` instances of each test's own for failover, and the lab's DoH and
/// DoT server (Unbound).
@Suite struct ForwardTests {
    let lab: Lab

    init() throws {
        lab = try Lab.current()
    }

    /// A resolver whose budget leaves room for a loaded machine: these tests check answers, not time
    /// (the test that bounds time is in scripts/test's timed phase).
    private static func generousResolver(_ upstreams: [Upstream]) throws -> TrustedResolver {
        var configuration = TrustedResolver.Configuration(upstreams: upstreams)
        configuration.budget = .seconds(30)
        return try TrustedResolver(configuration: configuration)
    }

    private static func question(_ name: String, _ type: UInt16) throws -> ForwardedQuestion {
        try #require(ForwardedQuestion(name: name, type: type))
    }

    @Test func mxComesWithItsAdditionalAddressAndTXTAndSRVAsTheZoneHasThem() async throws {
        let resolver = try Self.generousResolver([lab.trustedDNS])
        let mx = try #require(ForwardedReply(try await resolver.forward(Self.question("example.test", 15))))
        #expect(mx.rcode == 0)
        #expect(mx.answers == ["example.test.\t3600\tIN\tMX\t10 mail.example.test."])
        #expect(mx.additional.contains("mail.example.test.\t3600\tIN\tA\t127.0.0.10"))
        let txt = try #require(ForwardedReply(try await resolver.forward(Self.question("Info.Example.TEST.", 16))))
        #expect(txt.answers == ["info.example.test.\t300\tIN\tTXT\t\"hostpin lab\" \"forwarded\""])
        let srv = try #require(ForwardedReply(try await resolver.forward(Self.question("_imaps._tcp.example.test", 33))))
        #expect(srv.answers == ["_imaps._tcp.example.test.\t3600\tIN\tSRV\t0 1 993 mail.example.test."])
        #expect(resolver.health.status(of: lab.trustedDNS) == .healthy)
    }

    @Test func nxdomainAndNODATAAreRelayedWithTheZonesSOA() async throws {
        let resolver = try Self.generousResolver([lab.trustedDNS])
        let soa = "example.test.\t60\tIN\tSOA\tns.example.test. hostmaster.example.test. 2024010101 3600 600 86400 60"
        let nxdomain = try #require(ForwardedReply(try await resolver.forward(Self.question("nx.example.test", 16))))
        #expect(nxdomain.rcode == 3)
        #expect(nxdomain.answers.isEmpty)
        #expect(nxdomain.authority == [soa])
        let nodata = try #require(ForwardedReply(try await resolver.forward(Self.question("www.example.test", 16))))
        #expect(nodata.rcode == 0)
        #expect(nodata.answers.isEmpty)
        #expect(nodata.authority == [soa])
        // An answer, not a failure.
        #expect(resolver.health.status(of: lab.trustedDNS) == .healthy)
    }

    @Test func aSERVFAILingFirstUpstreamIsSkippedAndStaysHealthy() async throws {
        let failing = try await FaultServer(mode: .servfail, upstream: nil)
        let resolver = try TrustedResolver(configuration: .init(upstreams: [failing.address, lab.trustedDNS]),
                                           clock: ManualClock())
        let reply = try #require(ForwardedReply(try await resolver.forward(Self.question("info.example.test", 16))))
        #expect(reply.answers == ["info.example.test.\t300\tIN\tTXT\t\"hostpin lab\" \"forwarded\""])
        #expect(failing.queries == [FaultServer.Query(transport: "udp", type: "TXT", name: "info.example.test", mode: "servfail")])
        // One name's SERVFAIL is no outage: not held down, so the next question goes to it first again.
        #expect(resolver.health.status(of: failing.address) == .healthy)
        #expect(resolver.health.status(of: lab.trustedDNS) == .healthy)
        let next = try #require(ForwardedReply(try await resolver.forward(Self.question("example.test", 15))))
        #expect(next.answers == ["example.test.\t3600\tIN\tMX\t10 mail.example.test."])
        #expect(failing.queries.map(\.name) == ["info.example.test", "example.test"])
    }

    @Test(arguments: [FaultServer.Mode.refused, .qrClear, .rcode15, .truncateOverTCP])
    func aReplyThatIsNoAnswerFailsOver(mode: FaultServer.Mode) async throws {
        let odd = try await FaultServer(mode: mode, upstream: lab.trustedDNS)
        let resolver = try TrustedResolver(configuration: .init(upstreams: [odd.address, lab.trustedDNS]),
                                           clock: ManualClock())
        let reply = try #require(ForwardedReply(try await resolver.forward(Self.question("_imaps._tcp.example.test", 33))))
        #expect(reply.answers == ["_imaps._tcp.example.test.\t3600\tIN\tSRV\t0 1 993 mail.example.test."])
        // REFUSED is about one name; a malformed reply would be so for any name.
        #expect(resolver.health.status(of: odd.address)
                    == (mode == .refused ? .healthy : .heldDown(failures: 1, remaining: .seconds(1))))
        // TC over UDP moves the query to TCP at the same upstream (c-ares); TC there too is no answer.
        #expect(odd.queries.map(\.transport) == (mode == .truncateOverTCP ? ["udp", "tcp"] : ["udp"]))

        let alone = try TrustedResolver(upstreams: [odd.address])
        let reason: UpstreamFailure.Reason = mode == .refused ? .refused : .badResponse
        await #expect(throws: ResolutionError.upstreamsFailed([UpstreamFailure(upstream: odd.address, reason: reason)])) {
            try await alone.forward(Self.question("_imaps._tcp.example.test", 33))
        }
    }

    @Test func upstreamsThatNeverAnswerEndWithinTheBudget() async throws {
        let silent = try await FaultServer(mode: .drop, upstream: nil)
        var configuration = TrustedResolver.Configuration(upstreams: [silent.address])
        configuration.budget = .milliseconds(500)
        let resolver = try TrustedResolver(configuration: configuration, clock: ManualClock())
        let started = ContinuousClock.now
        await #expect(throws: ResolutionError.timeout(budget: .milliseconds(500),
                                                      [UpstreamFailure(upstream: silent.address, reason: .timeout)])) {
            try await resolver.forward(Self.question("info.example.test", 16))
        }
        #expect(ContinuousClock.now - started < .seconds(3))  // the budget, not c-ares's 3 s of tries
        #expect(resolver.health.status(of: silent.address) == .heldDown(failures: 1, remaining: .seconds(1)))
    }

    @Test(.enabled(if: EncryptedLabServer.current != nil, "the lab has no DoH/DoT server (LAB_DOH_URL)"),
          arguments: [false, true])
    func overDoHAndDoTTheTXTAnswerComes(dot: Bool) async throws {
        let server = try #require(EncryptedLabServer.current)
        var configuration = TrustedResolver.Configuration(upstreams: [Upstream(try server.upstream(dot: dot))])
        configuration.timeout = .seconds(3)
        configuration.budget = .seconds(30)
        let resolver = try TrustedResolver(configuration: configuration)
        let reply = try #require(ForwardedReply(try await resolver.forward(Self.question("info.example.test", 16))))
        #expect(reply.rcode == 0)
        // Unbound counts the TTL down from the zone's 300.
        #expect(reply.answers.count == 1)
        #expect(reply.answers.first?.hasPrefix("info.example.test.\t") == true)
        #expect(reply.answers.first?.hasSuffix("\tIN\tTXT\t\"hostpin lab\" \"forwarded\"") == true)
        let nxdomain = try #require(ForwardedReply(try await resolver.forward(Self.question("nx.example.test", 16))))
        #expect(nxdomain.rcode == 3)
    }

    @Test func eachUpstreamGetsAQueryOfHostPinsOwn() async throws {
        let recording = RecordingTransport(try lab.trustedDNS.makeTransport(timeout: .seconds(1), tries: 2, useTCP: false))
        let question = try Self.question("INFO.example.test", 16)
        for _ in 1...2 {
            let outcome = await withCheckedContinuation { continuation in
                ForwardLookup.ask(recording, question, deadline: nil) { continuation.resume(returning: $0) }
            }
            guard case .answered = outcome else {
                Issue.record("no answer")
                return
            }
        }
        let queries = try recording.queries.map { try #require(SentQuery($0)) }
        #expect(queries.count == 2)
        for query in queries {
            #expect(query.question == "info.example.test.\tIN\tTXT")
            #expect(query.recursionDesired)
            #expect(query.udpPayloadSize == 1232)
            #expect(!query.dnssecOK)
        }
        #expect(queries[0].id != queries[1].id)  // 1 in 65 536 that two random IDs agree
    }

    @Test func aReplyIsJudgedFromItsHeaderQuestionAndRCODE() throws {
        let question = try Self.question("info.example.test", 16)
        func judge(_ message: WireMessage) throws -> ForwardLookup.Outcome {
            ForwardLookup.judge(try message.bytes, for: question)
        }
        let answer = WireMessage(question: "INFO.Example.Test. IN TXT", answers: ["info.example.test. 300 IN TXT \"x\""])
        #expect(try judge(answer) == .answered(try answer.bytes, signed: nil))
        var nxdomain = WireMessage(question: "info.example.test. IN TXT")
        nxdomain.rcode = 3
        #expect(try judge(nxdomain) == .answered(try nxdomain.bytes, signed: nil))
        var truncated = answer
        truncated.isTruncated = true
        var query = answer
        query.isResponse = false
        var notify = answer
        notify.opcode = 4
        for bad in [truncated, query, notify, WireMessage(question: "www.example.test. IN TXT"),
                    WireMessage(question: "info.example.test. IN MX"), WireMessage(question: "info.example.test. CH TXT")] {
            #expect(try judge(bad) == .failed(.badResponse))
        }
        for (rcode, outcome) in [(2, ForwardLookup.Outcome.failed(.servfail)), (5, .failed(.refused)), (1, .failed(.badResponse)),
                                 (4, .failed(.badResponse)), (15, .failed(.badResponse))] as [(UInt8, ForwardLookup.Outcome)] {
            var reply = WireMessage(question: "info.example.test. IN TXT")
            reply.rcode = rcode
            #expect(try judge(reply) == outcome, "RCODE \(rcode)")
        }
        #expect(ForwardLookup.judge([0x12, 0x34, 0x81], for: question) == .failed(.badResponse))
    }

    @Test func aQuestionsNameIsReadByLDNS() throws {
        #expect(ForwardedQuestion(name: "Info.Example.TEST.", type: 16) == ForwardedQuestion(name: "info.example.test", type: 16))
        #expect(ForwardedQuestion(name: "Info.Example.TEST", type: 16)?.name == "info.example.test")
        #expect(ForwardedQuestion(name: ".", type: 2)?.name == "")
        #expect(ForwardedQuestion(name: "", type: 2)?.name == "")
        #expect(ForwardedQuestion(name: "10.in-addr.arpa", type: 12)?.name == "10.in-addr.arpa")
        #expect(ForwardedQuestion(name: #"a\.b.test"#, type: 16)?.name == #"a\.b.test"#)
        #expect(ForwardedQuestion(name: #"a\."#, type: 16)?.name == #"a\."#)
        #expect(ForwardedQuestion(name: String(repeating: "a", count: 64) + ".test", type: 16) == nil)
        #expect(ForwardedQuestion(name: "a..test", type: 16) == nil)
    }
}

/// An upstream's transport that keeps a copy of every query it carries.
private final class RecordingTransport: UpstreamTransport {
    private let inner: any UpstreamTransport
    private let sent = Mutex<[[UInt8]]>([])

    init(_ inner: any UpstreamTransport) {
        self.inner = inner
    }

    var queries: [[UInt8]] { sent.withLock { $0 } }

    func exchange(_ queries: [[UInt8]], deadline: ResolutionDeadline?) async -> [ExchangeOutcome] {
        sent.withLock { $0 += queries }
        return await inner.exchange(queries, deadline: deadline)
    }
}

/// A query as the test reads it with ldns.
private struct SentQuery {
    let id: UInt16
    let recursionDesired: Bool
    /// `NAME\tCLASS\tTYPE`, as ldns prints a question.
    let question: String
    let udpPayloadSize: UInt16?
    let dnssecOK: Bool

    init?(_ wire: [UInt8]) {
        guard let packet = parse(wire) else { return nil }
        defer { ldns_pkt_free(packet) }
        id = ldns_pkt_id(packet)
        recursionDesired = ldns_pkt_rd(packet)
        guard ldns_pkt_qdcount(packet) == 1, let questions = lines(ldns_pkt_question(packet)).first else { return nil }
        question = questions
        udpPayloadSize = ldns_pkt_edns(packet) ? ldns_pkt_edns_udp_size(packet) : nil
        dnssecOK = ldns_pkt_edns_do(packet)
    }
}

/// A forwarded reply as the test reads it with ldns: each section's records as zone-file lines.
private struct ForwardedReply {
    let rcode: UInt32
    let answers: [String]
    let authority: [String]
    let additional: [String]

    init?(_ wire: [UInt8]) {
        guard let packet = parse(wire), ldns_pkt_qr(packet) else { return nil }
        defer { ldns_pkt_free(packet) }
        rcode = ldns_pkt_get_rcode(packet).rawValue
        answers = lines(ldns_pkt_answer(packet))
        authority = lines(ldns_pkt_authority(packet))
        additional = lines(ldns_pkt_additional(packet))
    }
}

private func parse(_ wire: [UInt8]) -> UnsafeMutablePointer<ldns_pkt>? {
    var parsed: UnsafeMutablePointer<ldns_pkt>?
    guard wire.withUnsafeBufferPointer({ ldns_wire2pkt(&parsed, $0.baseAddress, $0.count) }) == LDNS_STATUS_OK else { return nil }
    return parsed
}

/// The records of `list` as ldns prints them, without the final newline.
private func lines(_ list: UnsafeMutablePointer<ldns_rr_list>?) -> [String] {
    (0..<(list.map { ldns_rr_list_rr_count($0) } ?? 0)).compactMap { index in
        guard let text = ldns_rr2str(ldns_rr_list_rr(list, index)) else { return nil }
        defer { free(text) }
        return String(cString: text).trimmingCharacters(in: .newlines)
    }
}
