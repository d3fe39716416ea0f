import CLDNS
import HostPin
@testable import HostPinDNS
import Testing

/// The stub's cache of forwarded replies (``ForwardCache``) and how long a reply may be kept
/// (``ReplyLifetime``), on replies ldns builds from zone-file text, with a clock the test moves.
@Suite struct ForwardCacheTests {
    private static let soa = "example.test. 60 IN SOA ns.example.test. hostmaster.example.test. 1 3600 600 86400 30"

    /// A response to `question` (`NAME CLASS TYPE`) with `rcode` and these records (zone-file lines).
    private static func reply(_ question: String, rcode: UInt8 = 0, answers: [String] = [], authority: [String] = [],
                              additional: [String] = []) throws -> [UInt8] {
        let packet = try #require(ldns_pkt_new())
        defer { ldns_pkt_free(packet) }
        ldns_pkt_set_qr(packet, true)
        ldns_pkt_set_rcode(packet, rcode)
        var entry: UnsafeMutablePointer<ldns_rr>?
        try #require(ldns_rr_new_question_frm_str(&entry, question, nil, nil) == LDNS_STATUS_OK)
        ldns_pkt_push_rr(packet, LDNS_SECTION_QUESTION, entry)
        for (section, lines) in [(LDNS_SECTION_ANSWER, answers), (LDNS_SECTION_AUTHORITY, authority),
                                 (LDNS_SECTION_ADDITIONAL, additional)] {
            for line in lines {
                var rr: UnsafeMutablePointer<ldns_rr>?
                try #require(ldns_rr_new_frm_str(&rr, line, 0, nil, nil) == LDNS_STATUS_OK, "\(line)")
                ldns_pkt_push_rr(packet, section, rr)
            }
        }
        return TestMessage.wire(packet)
    }

    private static func question(_ name: String, _ type: UInt16 = 16) throws -> ForwardedQuestion {
        try #require(ForwardedQuestion(name: name, type: type))
    }

    @Test func aReplyIsKeptForItsSmallestTTLAndServedWithItsAge() throws {
        let clock = TestClock()
        let cache = ForwardCache(maximumTTL: 86_400, clock: clock)
        let reply = try Self.reply("example.test. IN MX", answers: ["example.test. 3600 IN MX 10 mail.example.test."],
                                   additional: ["mail.example.test. 120 IN A 127.0.0.10"])
        cache.store(reply, for: try Self.question("example.test", 15))
        #expect(cache.reply(for: try Self.question("Example.Test.", 15))?.reply == reply)
        #expect(cache.reply(for: try Self.question("example.test", 16)) == nil)
        clock.advance(seconds: 119)
        #expect(cache.reply(for: try Self.question("example.test", 15))?.age == 119)
        clock.advance(seconds: 1)
        #expect(cache.reply(for: try Self.question("example.test", 15)) == nil)
        #expect(cache.count == 0)
    }

    /// ``ReplyLifetime`` of a reply built as ``reply(_:rcode:answers:authority:additional:)`` builds it, as
    /// the answer to `name`'s TXT (the reply's own question by default).
    private static func lifetime(_ question: String, rcode: UInt8 = 0, answers: [String] = [], authority: [String] = [],
                                 answering name: String? = nil) throws -> UInt32? {
        let reply = try reply(question, rcode: rcode, answers: answers, authority: authority)
        return ReplyLifetime.seconds(of: reply, answering: try Self.question(name ?? String(question.prefix { $0 != " " })))
    }

    @Test func howLongAReplyMayBeKept() throws {
        let txt = "info.example.test. 300 IN TXT \"x\""
        #expect(try Self.lifetime("info.example.test. IN TXT", answers: [txt]) == 300)
        #expect(try Self.lifetime("INFO.example.test. IN TXT", answers: [txt], answering: "info.Example.test") == 300)
        // Negative answers: the SOA's TTL or MINIMUM, whichever is smaller (RFC 2308 §5).
        #expect(try Self.lifetime("nx.example.test. IN TXT", rcode: 3, authority: [Self.soa]) == 30)
        #expect(try Self.lifetime("www.example.test. IN TXT", authority: [Self.soa]) == 30)
        // Without an SOA a negative answer says nothing of how long it holds; SERVFAIL is never kept.
        #expect(try Self.lifetime("nx.example.test. IN TXT", rcode: 3) == nil)
        #expect(try Self.lifetime("www.example.test. IN TXT") == nil)
        #expect(try Self.lifetime("info.example.test. IN TXT", rcode: 2, answers: [txt]) == nil)
        #expect(ReplyLifetime.seconds(of: [1, 2, 3], answering: try Self.question("info.example.test")) == nil)
        #expect(try Self.lifetime("info.example.test. IN TXT", answers: [txt, "info.example.test. 0 IN TXT \"y\""]) == 0)
        // A reply to another question is no answer to this one: another name, another type.
        #expect(try Self.lifetime("info.example.test. IN TXT", answers: [txt], answering: "www.example.test") == nil)
        let txtReply = try Self.reply("info.example.test. IN TXT", answers: [txt])
        #expect(ReplyLifetime.seconds(of: txtReply, answering: try Self.question("info.example.test", 15)) == nil)
    }

    @Test func repliesWithoutALifetimeAreNotKeptAndTheLongestTTLIsCapped() throws {
        let clock = TestClock()
        let cache = ForwardCache(maximumTTL: 100, clock: clock)
        let question = try Self.question("info.example.test")
        cache.store(try Self.reply("info.example.test. IN TXT", answers: ["info.example.test. 3600 IN TXT \"x\""]), for: question)
        clock.advance(seconds: 100)
        #expect(cache.reply(for: question) == nil)
        cache.store(try Self.reply("info.example.test. IN TXT", answers: ["info.example.test. 300 IN TXT \"x\""]), for: question)
        #expect(cache.count == 1)
        // A later reply without a lifetime replaces what was kept by nothing.
        cache.store(try Self.reply("info.example.test. IN TXT", answers: ["info.example.test. 0 IN TXT \"x\""]), for: question)
        #expect(cache.reply(for: question) == nil)
        #expect(cache.count == 0)
    }

    @Test func theCacheHoldsAtMostItsEntriesDroppingThoseExpiringFirst() throws {
        let clock = TestClock()
        let cache = ForwardCache(maximumTTL: 86_400, maximumEntries: 16, clock: clock)
        for index in 0..<16 {
            let name = "n\(index).example.test"
            cache.store(try Self.reply("\(name). IN TXT", answers: ["\(name). \(1000 + index) IN TXT \"x\""]),
                        for: try Self.question(name))
        }
        #expect(cache.count == 16)
        cache.store(try Self.reply("new.example.test. IN TXT", answers: ["new.example.test. 10 IN TXT \"x\""]),
                    for: try Self.question("new.example.test"))
        // Room for the new one and two more (an eighth): the three expiring first are gone.
        #expect(cache.count == 14)
        #expect(cache.reply(for: try Self.question("new.example.test")) != nil)
        for index in 0..<3 { #expect(cache.reply(for: try Self.question("n\(index).example.test")) == nil) }
        for index in 3..<16 { #expect(cache.reply(for: try Self.question("n\(index).example.test")) != nil) }
    }

    @Test func theCacheHoldsAtMostItsBytes() throws {
        let cache = ForwardCache(maximumTTL: 86_400, maximumBytes: 2000, clock: TestClock())
        let big = String(repeating: "x", count: 200)
        for index in 0..<20 {
            let name = "n\(index).example.test"
            cache.store(try Self.reply("\(name). IN TXT", answers: ["\(name). 300 IN TXT \"\(big)\""]), for: try Self.question(name))
        }
        let kept = (0..<20).compactMap { try? cache.reply(for: Self.question("n\($0).example.test")) }
        #expect(kept.reduce(0) { $0 + $1.reply.count } <= 2000)
        #expect(kept.count >= 5)
        #expect(try cache.reply(for: Self.question("n19.example.test")) != nil)  // the newest is kept
        let huge = try Self.reply("huge.example.test. IN TXT", answers: (0..<10).map { "huge.example.test. 300 IN TXT \"\($0)\(big)\"" })
        cache.store(huge, for: try Self.question("huge.example.test"))
        #expect(try cache.reply(for: Self.question("huge.example.test")) == nil)  // larger than the whole cache
    }
}
