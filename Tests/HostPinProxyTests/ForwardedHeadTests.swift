import Foundation
import HostPin
@testable import HostPinProxy
import HostPinTestSupport
import Testing

/// A forwarded head frames the body the proxy relays as the received head did, whatever its `Connection`
/// field names: else the next hop takes body bytes for the next message (request smuggling). Found by
/// `scripts/fuzz request-head` (and the same property in `response-head`).
@Suite struct ForwardedHeadTests {
    static let parser = RequestHeadParser()

    @Test(arguments: ["content-length", "Content-Length, close", "keep-alive, content-length"])
    func requestNamingContentLengthInConnectionIsForwardedWithIt(option: String) throws {
        let head = try Self.parser.parse(Array(
            "POST http://a.test/x HTTP/1.1\r\nHost: a.test\r\nConnection: \(option)\r\nContent-Length: 5\r\n\r\n".utf8))
        guard case .absoluteForm(let authority, let path) = head.target else {
            Issue.record("not absolute-form: \(head.target)")
            return
        }
        let forwarded = ForwardedHead.request(head, authority: authority, path: path, via: "hostpin", closing: false)
        #expect(try Self.parser.parse(forwarded).framing == .contentLength(5), "\(String(decoding: forwarded, as: UTF8.self))")
    }

    /// Heads the strict parser accepts, with what a forwarded head must drop or keep: hop-by-hop fields
    /// and those `Connection` names, `Host` in any case, whitespace around values, chunked, HTTP/1.0.
    static let corpus = [
        "GET http://a.test/x HTTP/1.1\r\nHost: a.test\r\n\r\n",
        "GET http://a.test:8080/x?q=1 HTTP/1.1\r\nhOsT:   other.test  \r\nAccept: */*\r\nUser-Agent: t/1\r\n\r\n",
        "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nConnection: keep-alive, X-Private\r\nX-Private: 1\r\n"
            + "X-Public:\t2\t\r\nProxy-Connection: keep-alive\r\nKeep-Alive: 5\r\nTE: trailers\r\nUpgrade: h2c\r\n"
            + "Proxy-Authorization: Basic eDp5\r\nTrailer: X\r\n\r\n",
        "POST http://a.test/p HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n",
        "POST http://a.test/p HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\nConnection: content-length\r\n\r\n",
        "GET http://a.test/x HTTP/1.0\r\nAccept: text/html\r\nX-Empty:\r\nX-Spaces:    \r\n\r\n",
        "GET http://[::1]:81/x HTTP/1.1\r\nHost: [::1]:81\r\nCookie: a=b; c=d\r\nX-Unicode: caf\u{E9}\r\n\r\n",
    ]

    /// The head copied from the received bytes is the head rebuilt from the parsed fields, byte for byte.
    @Test(arguments: corpus, [false, true])
    func theCopiedHeadIsTheRebuiltHead(text: String, closing: Bool) throws {
        let head = try Self.parser.parse(Array(text.utf8))
        guard case .absoluteForm(let authority, let path) = head.target else {
            Issue.record("not absolute-form: \(head.target)")
            return
        }
        let copied = ForwardedHead.request(head, authority: authority, path: path, via: "hostpin", closing: closing)
        let rebuilt = ForwardedHead.edited(head, authority: authority, path: path, via: "hostpin", closing: closing, edits: [])
        #expect(String(decoding: copied, as: UTF8.self) == String(decoding: rebuilt, as: UTF8.self))
        #expect(copied == rebuilt)
    }

    /// A value with obs-text (RFC 9110 §5.5: octets 0x80-0xFF, here Latin-1, not UTF-8) reaches the origin
    /// as received; made into a `String` and back, each such byte became U+FFFD's three bytes.
    @Test func obsTextInAValueIsForwardedByteForByte() throws {
        let received = Array("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nX-Name: caf".utf8) + [0xE9]
            + Array("\r\n\r\n".utf8)
        let head = try Self.parser.parse(received)
        guard case .absoluteForm(let authority, let path) = head.target else {
            Issue.record("not absolute-form: \(head.target)")
            return
        }
        let forwarded = ForwardedHead.request(head, authority: authority, path: path, via: "hostpin", closing: false)
        let expected = Array("GET / HTTP/1.1\r\nHost: a.test\r\nX-Name: caf".utf8) + [0xE9]
            + Array("\r\nVia: 1.1 hostpin\r\n\r\n".utf8)
        #expect(forwarded == expected, "\(forwarded.suffix(30))")
    }

    @Test func responseNamingContentLengthInConnectionIsForwardedWithIt() throws {
        let response = try ResponseHead.parse(
            Array("HTTP/1.1 200 OK\r\nConnection: content-length\r\nContent-Length: 5\r\n\r\n".utf8), limits: HeadLimits())
        let forwarded = ForwardedHead.response(response, coding: .identity, closing: false, via: "hostpin")
        let sent = try ResponseHead.parse(forwarded, limits: HeadLimits())
        #expect(try sent.framing(requestMethod: "GET") == .contentLength(5), "\(String(decoding: forwarded, as: UTF8.self))")
    }

    @Test func postNamingContentLengthInConnectionReachesTheOriginWithItsBody() async throws {
        try await ProxyLab.withProxy { proxy, lab, _ in
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", "-H", "Connection: content-length",
                                                  "--data-binary", "hello", ProxyLab.http(lab, "www.example.test", "/echo")])
            let sha256 = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"  // of "hello"
            #expect(result.standardOutput
                == "origin=www host=www.example.test:\(lab.httpPort) method=POST length=5 sha256=\(sha256)\n")
        }
    }
}
