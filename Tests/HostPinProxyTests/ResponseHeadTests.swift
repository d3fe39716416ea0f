import HostPin
@testable import HostPinProxy
import Testing

/// An origin's response head as the proxy reads it (``ResponseHead``, its field lines checked in place
/// by ``FieldLines``) and forwards it (``ForwardedHead/response(_:coding:closing:via:)``, copied from the
/// received bytes): one row per rule of RFC 9112 it enforces, and what the client gets.
@Suite struct ResponseHeadTests {
    static func parse(_ text: String) throws(HeadError) -> ResponseHead {
        try ResponseHead.parse(Array(text.utf8), limits: HeadLimits())
    }

    @Test(arguments: [
        ("HTTP/1.1 20 OK\r\n\r\n", HeadError.malformedStatusLine),
        ("HTTP/2.0 200 OK\r\n\r\n", .malformedStatusLine),
        ("\r\nHTTP/1.1 200 OK\r\n\r\n", .malformedStatusLine),
        ("HTTP/1.1 200 OK\nX-A: 1\r\n\r\n", .bareLF),
        ("HTTP/1.1 200 OK\r\nX-A: 1\n\r\n", .bareLF),
        ("HTTP/1.1 200 OK\r\nX-A: 1\r2\r\n\r\n", .bareCR),
        ("HTTP/1.1 200 OK\r\nX-A: 1\r\n  folded\r\n\r\n", .obsoleteLineFolding),
        ("HTTP/1.1 200 OK\r\nX-A : 1\r\n\r\n", .whitespaceBeforeColon),
        ("HTTP/1.1 200 OK\r\nX-A 1\r\n\r\n", .missingColon),
        ("HTTP/1.1 200 OK\r\n: 1\r\n\r\n", .invalidFieldName),
        ("HTTP/1.1 200 OK\r\nX-A: 1\u{0}2\r\n\r\n", .invalidFieldValue(name: "X-A")),
        ("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", .conflictingContentLength),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", .chunkedNotFinal),
        ("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", .repeatedContentLength("5, 5")),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked;x=1\r\n\r\n", .chunkedWithParameter("chunked;x=1")),
    ])
    func badHeadIsRefusedWithItsProblem(text: String, problem: HeadError) {
        #expect(throws: problem) {
            let head = try Self.parse(text)
            _ = try head.framing(requestMethod: "GET")
        }
    }

    @Test func statusFieldsAndFramingAreRead() throws {
        let head = try Self.parse("HTTP/1.0 404 Not Found\r\nX-A:  one two \r\ncontent-LENGTH: 7\r\n\r\n")
        #expect(head.version == .http10)
        #expect(head.status == 404)
        #expect(head.reason == "Not Found")
        #expect(try head.framing(requestMethod: "GET") == .contentLength(7))
        #expect(try head.framing(requestMethod: "HEAD") == BodyFraming.none)
        #expect(head.controlFields.values("Content-Length") == ["7"])
        #expect(head.controlFields.values("X-A").isEmpty)
    }

    /// End-to-end lines go on as received (value trimmed), in order; hop-by-hop ones and those the
    /// `Connection` field names do not, except `Content-Length`; the proxy's own framing, `Via` and
    /// `Connection: close` follow.
    @Test func forwardedHeadKeepsEndToEndLinesOnly() throws {
        let head = try Self.parse("HTTP/1.1 200 OK\r\nServer: nginx\r\nConnection: keep-alive, X-Private, content-length\r\n"
            + "Keep-Alive: timeout=5\r\nX-Private: secret\r\nTransfer-Encoding: chunked\r\nContent-Type:  text/plain \r\n"
            + "x-private: again\r\nproxy-authenticate: Basic\r\n\r\n")
        let forwarded = ForwardedHead.response(head, coding: .chunked, closing: true, via: "hostpin")
        #expect(String(decoding: forwarded, as: UTF8.self)
            == "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n"
            + "Via: 1.1 hostpin\r\nConnection: close\r\n\r\n")
    }
}
