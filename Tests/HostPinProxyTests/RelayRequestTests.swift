import Foundation
import HostPin
@testable import HostPinProxy
import Testing

/// ``RelayRequest``, the keep-alive relay's check of a request in its bytes, against ``RequestHeadParser``:
/// every head the check takes, the parser takes with the same meaning (method, target, no body,
/// keep-alive) and the same forwarded head; the check takes the requests the relay exists for, and
/// leaves every other to the task.
@Suite struct RelayRequestTests {
    static let parser = RequestHeadParser()

    /// The kept authority, parsed from `target` as a first request's.
    static func authority(_ target: String) throws -> RequestTarget.Authority {
        let head = try parser.parse(Array("GET \(target) HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        guard case .absoluteForm(let authority, _) = head.target else { throw Failure.notAbsolute(head.target) }
        return authority
    }

    enum Failure: Error { case notAbsolute(RequestTarget) }

    static let authorities = [try! authority("http://a.test:8080/"), try! authority("http://a.test/"),
                              try! authority("http://[::1]:8080/"), try! authority("http://127.0.0.1:53119/")]

    /// Whether the check and the parser agree on `head` for `authority`; a description of the
    /// disagreement otherwise. Returns whether the check took it.
    @discardableResult
    static func agree(_ head: [UInt8], _ authority: RequestTarget.Authority, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        guard let request = RelayRequest.check(head, authority: authority) else { return false }
        let text = String(decoding: head, as: UTF8.self).debugDescription
        let parsed: RequestHead
        do {
            parsed = try parser.parse(head)
        } catch {
            Issue.record("the relay takes \(text), which the parser refuses: \(error)", sourceLocation: sourceLocation)
            return true
        }
        guard case .absoluteForm(let parsedAuthority, let path) = parsed.target else {
            Issue.record("the relay takes \(text), whose target is \(parsed.target)", sourceLocation: sourceLocation)
            return true
        }
        #expect(parsedAuthority == authority, "\(text)", sourceLocation: sourceLocation)
        #expect(parsed.method == request.method, "\(text)", sourceLocation: sourceLocation)
        #expect(parsed.framing == .none, "\(text)", sourceLocation: sourceLocation)
        #expect(parsed.wantsKeepAlive == request.wantsKeepAlive, "\(text)", sourceLocation: sourceLocation)
        #expect(parsed.targetText == String(decoding: head[request.target], as: UTF8.self), "\(text)", sourceLocation: sourceLocation)
        for closing in [false, true] {
            var forwarded: [UInt8] = []
            request.forwarded(authority: authority, via: "hostpin", closing: closing, to: &forwarded)
            let expected = ForwardedHead.request(parsed, authority: authority, path: path, via: "hostpin", closing: closing)
            #expect(forwarded == expected, "\(text): \(String(decoding: forwarded, as: UTF8.self).debugDescription)",
                    sourceLocation: sourceLocation)
        }
        return true
    }

    static let base = "GET http://a.test:8080/x HTTP/1.1\r\nHost: a.test:8080\r\n"

    @Test(arguments: [
        "GET http://a.test:8080/x HTTP/1.1\r\nHost: a.test:8080\r\n\r\n",
        "HEAD http://a.test:8080/x HTTP/1.1\r\nHost: a.test:8080\r\n\r\n",
        "GET http://a.test:8080 HTTP/1.1\r\nHost: a.test:8080\r\n\r\n",
        "GET http://a.test:8080?q=1 HTTP/1.1\r\nHost: a.test:8080\r\n\r\n",
        "GET http://a.test:8080/a/b?c=d&e HTTP/1.1\r\nhost:other.test\r\n\r\n",
        base + "Connection: close\r\n\r\n",
        base + "Connection: keep-alive, X-Private\r\nX-Private: 1\r\nX-Public:  2 \r\n\r\n",
        base + "Proxy-Connection: keep-alive\r\nKeep-Alive: 300\r\nTE: trailers\r\nUpgrade: h2c\r\n\r\n",
        base + "connection: Content-Length\r\nAccept: */*\r\nUser-Agent: curl/7.88.1\r\n\r\n",
        base + "Connection:\r\nConnection: , CLOSE ,\r\nX-Empty:\r\nX-Tab:\t1\t\r\n\r\n",
        base + "X-Obs: caf\u{E9}\r\n\r\n",
    ])
    func theRelaysRequestsAreTakenAsTheParserReadsThem(_ head: String) throws {
        #expect(Self.agree(Array(head.utf8), try Self.authority("http://a.test:8080/")))
    }

    @Test(arguments: [
        "POST http://a.test:8080/x HTTP/1.1\r\nHost: a.test:8080\r\n\r\n",
        "get http://a.test:8080/x HTTP/1.1\r\nHost: a.test:8080\r\n\r\n",
        "GET  http://a.test:8080/x HTTP/1.1\r\nHost: a.test:8080\r\n\r\n",
        "GET http://a.test:8080/x  HTTP/1.1\r\nHost: a.test:8080\r\n\r\n",
        "GET http://a.test:8080/x HTTP/1.0\r\nHost: a.test:8080\r\n\r\n",
        "GET http://a.test:8080/x HTTP/1.2\r\nHost: a.test:8080\r\n\r\n",
        "GET http://a.test:8080/x HTTP/1.1 \r\nHost: a.test:8080\r\n\r\n",
        "GET http://b.test:8080/x HTTP/1.1\r\nHost: a.test:8080\r\n\r\n",
        "GET http://A.test:8080/x HTTP/1.1\r\nHost: a.test:8080\r\n\r\n",
        "GET http://a.test:80800/x HTTP/1.1\r\nHost: a.test:8080\r\n\r\n",
        "GET http://a.test:8080.evil.test/x HTTP/1.1\r\nHost: a.test:8080\r\n\r\n",
        "GET http://a.test:8080@b.test/x HTTP/1.1\r\nHost: a.test:8080\r\n\r\n",
        "GET http://a.test:8080/x#f HTTP/1.1\r\nHost: a.test:8080\r\n\r\n",
        "GET http://a.test:8080/\u{7F} HTTP/1.1\r\nHost: a.test:8080\r\n\r\n",
        "GET /x HTTP/1.1\r\nHost: a.test:8080\r\n\r\n",
        "GET https://a.test:8080/x HTTP/1.1\r\nHost: a.test:8080\r\n\r\n",
        "GET http://a.test:8080/x HTTP/1.1\r\n\r\n",
        base + "Host: a.test:8080\r\n\r\n",
        base + "Content-Length: 0\r\n\r\n",
        base + "content-length: 5\r\n\r\n",
        base + "Transfer-Encoding: chunked\r\n\r\n",
        base + "X-A: 1\r\n folded\r\n\r\n",
        base + "X-A : 1\r\n\r\n",
        base + "X-A 1\r\n\r\n",
        base + ": 1\r\n\r\n",
        base + "X(A): 1\r\n\r\n",
        base + "X-A: 1\u{0}2\r\n\r\n",
    ])
    func anyOtherHeadIsLeftToTheTask(_ head: String) throws {
        #expect(RelayRequest.check(Array(head.utf8), authority: try Self.authority("http://a.test:8080/")) == nil)
    }

    /// The request-head fuzzer's seeds and heads made from them, each byte changed, put in or taken out
    /// (deterministically): wherever the check takes one, the parser agrees with it. A head the relay is
    /// given is whole and ends where `endOfHead` says; others are skipped.
    @Test func theCheckAgreesWithTheParserOnMutatedHeads() throws {
        let seeds = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Fuzz/Seeds/request-head").standardized
        var corpus = try FileManager.default.contentsOfDirectory(atPath: seeds.path).sorted().map { name in
            try [UInt8](Data(contentsOf: seeds.appendingPathComponent(name)))
        }
        #expect(corpus.count > 50)
        let own = [Self.base + "Connection: keep-alive, X-Private\r\nX-Private: 1\r\nAccept: */*\r\n\r\n",
                   "HEAD http://a.test?q HTTP/1.1\r\nHost: a.test\r\nProxy-Connection: close\r\n\r\n",
                   "GET http://[::1]:8080/ HTTP/1.1\r\nHost: [::1]:8080\r\nUser-Agent: x\r\n\r\n",
                   "GET http://127.0.0.1:53119/whoami HTTP/1.1\r\nHost: 127.0.0.1:53119\r\n\r\n"]
        corpus += own.map { Array($0.utf8) }
        let interesting: [UInt8] = [0x0D, 0x0A, 0x20, 0x09, 0x3A, 0x2C, 0x23, 0x00, 0x7F, 0x80, 0xFF, 0x61, 0x41, 0x2F, 0x3F, 0x40,
                                    0x5B, 0x5D, 0x31]
        var random = XorShift64(state: 0x5EED_2026)
        var taken = 0
        var checked = 0
        for seed in corpus {
            // The seed's own authority is kept as well: most seeds name hosts of their own.
            var authorities = Self.authorities
            if case .absoluteForm(let authority, _)? = (try? Self.parser.parse(seed))?.target { authorities.append(authority) }
            var variants = [seed]
            for _ in 0..<400 {
                var bytes = seed
                for _ in 0...Int(random.next() % 3) {
                    let at = Int(random.next() % UInt64(bytes.count + 1))
                    let byte = interesting[Int(random.next() % UInt64(interesting.count))]
                    switch random.next() % 3 {
                    case 0 where at < bytes.count: bytes[at] = byte
                    case 1 where at < bytes.count: bytes.remove(at: at)
                    default: bytes.insert(byte, at: at)
                    }
                }
                variants.append(bytes)
            }
            for head in variants {
                guard head.first != HeadSyntax.cr, let end = try? HeadSyntax.endOfHead(in: head, limits: HeadLimits()),
                      end == head.count
                else { continue }
                checked += 1
                for authority in authorities where Self.agree(head, authority) { taken += 1 }
            }
        }
        // The mutations reach both sides: heads the check takes and heads it leaves.
        #expect(checked > 5_000)
        #expect(taken > 1_000)
        #expect(taken < checked / 2, "taken \(taken) of \(checked)")
    }
}

/// xorshift64, seeded: the same heads on every run.
private struct XorShift64: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}
