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
