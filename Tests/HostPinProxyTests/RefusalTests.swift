import Foundation
import HostPin
import HostPinProxy
import HostPinTestSupport
import Testing

/// Every error response: its status, its one-line body, and the access log line.
@Suite struct RefusalTests {
    /// The status line and body of a raw exchange.
    static func statusAndBody(_ reply: String) -> (status: String, body: String) {
        let parts = reply.components(separatedBy: "\r\n\r\n")
        return (parts.first?.components(separatedBy: "\r\n").first ?? "", parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    @Test(arguments: [
        ("GET http://www.example.test/ HTTP/1.1\nHost: a\n\n", "HTTP/1.1 400 Bad Request",
         "Malformed request: a line ends in a bare LF instead of CRLF.\n"),
        ("GET http://www.example.test/ HTTP/1.1\r\nHost: a\r\nX: 1\r\n folded\r\n\r\n", "HTTP/1.1 400 Bad Request",
         "Malformed request: a field line starts with whitespace (obsolete line folding).\n"),
        ("POST http://www.example.test/ HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
         "HTTP/1.1 400 Bad Request", "Malformed request: the Content-Length values differ.\n"),
        ("POST http://www.example.test/ HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
         "HTTP/1.1 400 Bad Request", "Malformed request: the message has both Transfer-Encoding and Content-Length.\n"),
        ("GET / HTTP/1.1\r\nHost: www.example.test\r\n\r\n", "HTTP/1.1 400 Bad Request",
         "This is a forward proxy: send an absolute-form target (http://host/path) or CONNECT host:port, not '/'.\n"),
        ("GET http://www.example.test/ HTTP/2.0\r\nHost: a\r\n\r\n", "HTTP/1.1 505 HTTP Version Not Supported",
         "Malformed request: HTTP version 'HTTP/2.0' is not supported (HTTP/1.0 and HTTP/1.1 are).\n"),
        ("GET http://www.example.test/\(String(repeating: "a", count: 9000)) HTTP/1.1\r\nHost: a\r\n\r\n",
         "HTTP/1.1 414 URI Too Long", "Malformed request: the request line is longer than 8192 bytes.\n"),
        ("POST http://www.example.test/ HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
         "HTTP/1.1 400 Bad Request", "Malformed request: chunked is applied more than once (Transfer-Encoding: chunked, chunked).\n"),
        ("POST http://www.example.test/ HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
         "HTTP/1.1 400 Bad Request", "Malformed request: chunked is applied more than once (Transfer-Encoding: chunked, chunked).\n"),
        ("POST http://www.example.test/ HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\n",
         "HTTP/1.1 400 Bad Request", "Malformed request: Content-Length '99999999999999999999999' is too large (more than 18 digits).\n"),
        ("\u{1}\u{2}\u{3}garbage\r\n\r\n", "HTTP/1.1 400 Bad Request",
         "Malformed request: the request line is not 'METHOD SP TARGET SP HTTP/1.1'.\n"),
        // Identical Content-Length values, on two lines or in one list, are refused as nginx does, not
        // forwarded as received (RFC 9110 §8.6 allows either refusing or replacing them with one field).
        ("POST http://www.example.test/ HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
         "HTTP/1.1 400 Bad Request", "Malformed request: Content-Length is given more than once (5, 5); a message has one length.\n"),
        ("POST http://www.example.test/ HTTP/1.1\r\nHost: a\r\nContent-Length: 5,5\r\n\r\nhello",
         "HTTP/1.1 400 Bad Request", "Malformed request: Content-Length is given more than once (5, 5); a message has one length.\n"),
        ("POST http://www.example.test/ HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\nhello",
         "HTTP/1.1 400 Bad Request", "Malformed request: Content-Length is given more than once (5, 5); a message has one length.\n"),
        // RFC 9112 §7: chunked defines no parameters; it is final, so "not the final coding" would be untrue.
        ("POST http://www.example.test/ HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked;param\r\n\r\n0\r\n\r\n",
         "HTTP/1.1 400 Bad Request", "Malformed request: the chunked transfer coding takes no parameters (Transfer-Encoding: chunked;param).\n"),
        ("GET http://www.example.test/ HTTP/3.0\r\nHost: a\r\n\r\n", "HTTP/1.1 505 HTTP Version Not Supported",
         "Malformed request: HTTP version 'HTTP/3.0' is not supported (HTTP/1.0 and HTTP/1.1 are).\n"),
    ])
    func malformedHeadsGetAClearErrorAndTheConnectionCloses(request: String, status: String, body: String) async throws {
        try await ProxyLab.withProxy { proxy, _, log in
            let reply = try await TestSockets.exchange(proxy, Array(request.utf8))
            let (line, text) = Self.statusAndBody(reply)
            #expect(line == status)
            #expect(text == body)
            #expect(reply.contains("\r\nConnection: close\r\n"))
            #expect((await log.waitFor(1)).count == 1)
        }
    }

    @Test func originFormThroughCurlIs400() async throws {
        try await ProxyLab.withProxy { proxy, _, _ in
            let result = try await ProxyLab.curl(["-w", "%{http_code}", "-o", "/dev/null", "http://\(proxy)/"])
            #expect(result.standardOutput == "400")
        }
    }

    @Test func connectToAPortNotAllowedIs403() async throws {
        try await ProxyLab.withProxy { proxy, lab, log in
            let result = try await ProxyLab.curl(["--proxy", "http://\(proxy)", "--cacert", lab.caFile,
                                                  "https://www.example.test:\(lab.httpsPort)/whoami"])
            #expect(result.status == 56)
            #expect(result.standardError.contains("403"))
            #expect((await log.waitFor(1)).first?.status == 403)
            let reply = try await TestSockets.exchange(proxy, Array("CONNECT www.example.test:\(lab.httpsPort) HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            #expect(Self.statusAndBody(reply) == ("HTTP/1.1 403 Forbidden",
                                                  "CONNECT to port \(lab.httpsPort) is not allowed; allowed ports: 443.\n"))
        }
    }

    @Test func privateTargetWithoutAllowPrivateIs403() async throws {
        try await ProxyLab.withProxy(allowPrivate: false) { proxy, lab, log in
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", "-w", "%{http_code}",
                                                  ProxyLab.http(lab, "www.example.test", "/whoami")])
            #expect(result.standardOutput == "www.example.test resolves to 127.0.0.10, in special-purpose block "
                + "127.0.0.0/8 (loopback, RFC 1122); private targets are not allowed.\n403")
            #expect((await log.waitFor(1)).first?.pinned == nil)
            let literal = try await ProxyLab.curl(["-x", "http://\(proxy)", "-w", "%{http_code}", "-o", "/dev/null",
                                                   "http://[::1]:\(lab.httpPort)/whoami"])
            #expect(literal.standardOutput == "403")
        }
    }

    @Test func connectToAPrivateTargetWithoutAllowPrivateIs403() async throws {
        let lab = try Lab.current()
        try await ProxyLab.withProxy({ $0.allowedConnectPorts.insert(lab.httpsPort) }, allowPrivate: false) { proxy, lab, _ in
            let reply = try await TestSockets.exchange(proxy, Array("CONNECT www.example.test:\(lab.httpsPort) HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            #expect(Self.statusAndBody(reply).status == "HTTP/1.1 403 Forbidden")
        }
    }

    @Test func targetThatIsTheProxyItselfIs403() async throws {
        try await ProxyLab.withProxy { proxy, _, _ in
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", "http://\(proxy)/"])
            #expect(result.standardOutput == "The target \(proxy) is this proxy itself.\n")
        }
    }

    /// Other spellings of the proxy's own address (IPv4-mapped IPv6, the unspecified address, which
    /// Linux connects to the local host) are the proxy too: comparing addresses, not text.
    @Test(arguments: ["[::ffff:127.0.0.1]", "0.0.0.0", "[::ffff:0.0.0.0]", "127.0.0.1"])
    func connectToAnySpellingOfTheProxysOwnAddressIs403(host: String) async throws {
        try await ProxyLab.withProxy({ $0.allowedConnectPorts = Set(1...UInt16.max) }) { proxy, _, _ in
            let reply = try await TestSockets.exchange(proxy, Array("CONNECT \(host):\(proxy.port) HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            #expect(Self.statusAndBody(reply) == ("HTTP/1.1 403 Forbidden", "The target \(host):\(proxy.port) is this proxy itself.\n"))
        }
    }

    @Test func absoluteFormToAMappedSpellingOfTheProxyIs403() async throws {
        try await ProxyLab.withProxy { proxy, _, _ in
            let target = "http://[::ffff:127.0.0.1]:\(proxy.port)/"
            let reply = try await TestSockets.exchange(proxy, Array("GET \(target) HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            #expect(Self.statusAndBody(reply) == ("HTTP/1.1 403 Forbidden",
                                                  "The target [::ffff:127.0.0.1]:\(proxy.port) is this proxy itself.\n"))
        }
    }

    @Test func unresolvableNameIs502() async throws {
        try await ProxyLab.withProxy { proxy, lab, log in
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", "-w", "%{http_code}",
                                                  ProxyLab.http(lab, "nx.example.test", "/whoami")])
            #expect(result.standardOutput == "nx.example.test could not be resolved through the trusted upstreams: "
                + "nx.example.test: NXDOMAIN (the name does not exist).\n502")
            #expect((await log.waitFor(1)).first?.status == 502)
        }
    }

    /// A DNSSEC-bogus name is a resolution failure: 502 with the reason, in the body and as the access
    /// log line's last field (quoted); over CONNECT too. Nothing is connected to.
    @Test func bogusNameIs502WithTheReasonInTheBodyAndTheAccessLog() async throws {
        try await ProxyLab.withProxy(resolver: BogusResolver()) { proxy, lab, log in
            let reason = "DNSSEC validation failed (bogus): modified.example.test. A (key 4242): signature does not verify "
                + "(the RRSIG does not match the RRset)"
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", "-w", "%{http_code}",
                                                  ProxyLab.http(lab, "modified.example.test", "/whoami")])
            #expect(result.standardOutput == "modified.example.test could not be resolved through the trusted upstreams: \(reason).\n502")
            let entry = try #require((await log.waitFor(1)).first)
            #expect(entry.status == 502 && entry.pinned == nil && entry.source == nil)
            #expect(entry.failure == reason)
            // The line: … status, bytes, duration, no rule, no address source, then the reason.
            #expect(entry.description.contains(" - 502 0 ") && entry.description.hasSuffix("ms - - \"\(reason)\""),
                    "\(entry.description)")
            let tunnel = try await ProxyLab.curl(["-x", "http://\(proxy)", "-w", "%{http_connect}", "-o", "/dev/null",
                                                  "https://modified.example.test/"])
            #expect(tunnel.standardOutput == "502", "\(tunnel.standardOutput) \(tunnel.standardError)")
            let connect = try #require((await log.waitFor(2)).last)
            #expect(connect.method == "CONNECT" && connect.status == 502 && connect.failure == reason)
        }
    }

    @Test func noAddressConnectingIs502() async throws {
        let refusing = try TestSockets.RefusingPort()
        let closedPort = refusing.port  // bound, never listening: connecting is refused, and no other test can take it
        try await ProxyLab.withProxy { proxy, _, _ in
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", "-w", "%{http_code}", "http://127.0.0.1:\(closedPort)/"])
            #expect(result.standardOutput.hasPrefix("No address of 127.0.0.1 accepted a connection: 127.0.0.1:\(closedPort): connect: Connection refused"))
            #expect(result.standardOutput.hasSuffix(".\n502"))
        }
        _ = refusing
    }

    @Test func originThatNeverAnswersIs504() async throws {
        let silent = try TestSockets.SilentOrigin()
        try await ProxyLab.withProxy({ $0.originTimeout = .milliseconds(300) }) { proxy, _, log in
            let started = ContinuousClock.now
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", "-w", "%{http_code}", "http://127.0.0.1:\(silent.port)/"])
            #expect(result.standardOutput == "The origin 127.0.0.1:\(silent.port) did not answer within 0.3 s.\n504")
            #expect(ContinuousClock.now - started < .seconds(5))
            #expect((await log.waitFor(1)).first?.status == 504)
        }
        withExtendedLifetime(silent) {}
    }

    @Test func stalledBodyIsCutAfterTheIdleTimeout() async throws {
        try await ProxyLab.withProxy({ $0.idleTimeout = .milliseconds(500) }) { proxy, lab, log in
            let started = ContinuousClock.now
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", ProxyLab.http(lab, "www.example.test", "/slow/10000")])
            #expect(result.status == 18)  // curl: partial file — the head arrived, the body never did
            #expect(ContinuousClock.now - started < .seconds(5))
            #expect((await log.waitFor(1)).first?.status == 200)
        }
    }

    @Test(arguments: [
        ("zz", "Malformed request body: chunk size line 'zz' is not hex digits with optional extensions.\n"),
        ("ffffffffffffffffffff", "Malformed request body: chunk size 'ffffffffffffffffffff' is too large (more than 15 hex digits).\n"),
        // RFC 9112 §7.1.1: an extension's quoted string must end with its DQUOTE.
        ("5;a=\"b", "Malformed request body: chunk extension in size line '5;a=\"b' is not ';' name ['=' token or quoted string].\n"),
    ])
    func malformedChunkedUploadIs400(sizeLine: String, body: String) async throws {
        try await ProxyLab.withProxy { proxy, lab, _ in
            let request = "POST \(ProxyLab.http(lab, "www.example.test", "/echo")) HTTP/1.1\r\nHost: a\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n\(sizeLine)\r\n"
            let reply = try await TestSockets.exchange(proxy, Array(request.utf8))
            #expect(Self.statusAndBody(reply) == ("HTTP/1.1 400 Bad Request", body))
        }
    }

    @Test func remoteListenAddressIsRefusedUnlessAllowed() async throws {
        let resolver = try #require(ProxyLab.resolver)
        var configuration = ForwardProxy.Configuration()
        configuration.listenAddress = try #require(SocketAddress("0.0.0.0:0"))
        let proxy = ForwardProxy(configuration: configuration, resolver: resolver)
        #expect(throws: ListenError.remoteNotAllowed(configuration.listenAddress)) { try proxy.start() }
        #expect(proxy.boundAddress == nil)
    }
}
