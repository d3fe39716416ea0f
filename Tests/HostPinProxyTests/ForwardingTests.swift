import Foundation
import HostPin
import HostPinProxy
import HostPinTestSupport
import Testing

/// Absolute-form forwarding with real curl and the lab's nginx origins.
@Suite struct ForwardingTests {
    @Test func curlGetsThePinnedOriginWithTheRightHost() async throws {
        try await ProxyLab.withProxy { proxy, lab, log in
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", ProxyLab.http(lab, "www.example.test", "/whoami")])
            #expect(result.status == 0, "\(result.standardError)")
            #expect(result.standardOutput == "origin=www host=www.example.test:\(lab.httpPort)\n")
            let entry = try #require((await log.waitFor(1)).first)
            #expect(entry.method == "GET")
            #expect(entry.target == ProxyLab.http(lab, "www.example.test", "/whoami"))
            #expect(entry.pinned?.description == "127.0.0.10:\(lab.httpPort)")
            #expect(entry.status == 200)
            #expect(entry.bytes == UInt64(result.standardOutput.utf8.count))
            #expect(entry.rules.isEmpty)
            #expect(entry.source == .resolved(.upstream) || entry.source == .resolved(.cache))
            let fields = entry.description.split(separator: " ").map(String.init)
            #expect(fields.count == 10)
            #expect(fields.suffix(2) == ["-", entry.source?.description ?? "?"])
        }
    }

    @Test func embeddedProxyOnPortZeroReportsItsBoundPort() async throws {
        try await ProxyLab.withProxy { proxy, _, _ in
            #expect(proxy.port != 0)
            #expect(proxy.address == .loopbackV4)
        }
    }

    @Test func multiFailsOverToTheSecondPinnedAddress() async throws {
        try await ProxyLab.withProxy { proxy, lab, log in
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", ProxyLab.http(lab, "multi.example.test", "/whoami")])
            #expect(result.standardOutput == "origin=www host=multi.example.test:\(lab.httpPort)\n")
            #expect((await log.waitFor(1)).first?.pinned?.description == "127.0.0.10:\(lab.httpPort)")
        }
    }

    @Test func nameWithBothFamiliesGoesToIPv6First() async throws {
        try await ProxyLab.withProxy { proxy, lab, log in
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", ProxyLab.http(lab, "dual.example.test", "/whoami")])
            #expect(result.standardOutput == "origin=v6 host=dual.example.test:\(lab.httpPort)\n")
            #expect((await log.waitFor(1)).first?.pinned?.description == "[::1]:\(lab.httpPort)")
        }
    }

    /// The preferred family refuses (an IPv4-mapped IPv6 address where nothing listens): the race moves
    /// to IPv4 at once, without waiting for the attempt delay's timer.
    @Test func refusedIPv6AttemptHandsOverToIPv4() async throws {
        let rules = try Rules(json: Data(#"{"rules": [{"action": "pin", "host": "dual.example.test", "addresses": ["127.0.0.10", "::ffff:127.0.0.13"]}]}"#.utf8),
                              relativeTo: FileManager.default.temporaryDirectory)
        try await ProxyLab.withProxy({ $0.rules = rules }) { proxy, lab, log in
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", ProxyLab.http(lab, "dual.example.test", "/whoami")])
            #expect(result.standardOutput == "origin=www host=dual.example.test:\(lab.httpPort)\n")
            #expect((await log.waitFor(1)).first?.pinned?.description == "127.0.0.10:\(lab.httpPort)")
        }
    }

    @Test func ipv6OnlyNameIsReachedOverIPv6() async throws {
        try await ProxyLab.withProxy { proxy, lab, log in
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", ProxyLab.http(lab, "v6only.example.test", "/whoami")])
            #expect(result.standardOutput == "origin=v6 host=v6only.example.test:\(lab.httpPort)\n")
            #expect((await log.waitFor(1)).first?.pinned?.description == "[::1]:\(lab.httpPort)")
        }
    }

    @Test func keepAliveReusesOneClientConnection() async throws {
        try await ProxyLab.withProxy { proxy, lab, log in
            let url = ProxyLab.http(lab, "www.example.test", "/whoami")
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", "-w", "[%{num_connects}]\n", url, url, url])
            #expect(result.standardOutput.components(separatedBy: "origin=www").count == 4)
            #expect(result.standardOutput.contains("[1]"))
            #expect(result.standardOutput.components(separatedBy: "[0]").count == 3)
            let entries = await log.waitFor(3)
            let clients = Set(entries.compactMap(\.client))
            #expect(entries.count == 3)
            #expect(clients.count == 1)
        }
    }

    @Test func viaIsAddedAndHopByHopFieldsAreRemoved() async throws {
        try await ProxyLab.withProxy { proxy, lab, _ in
            let result = try await ProxyLab.curl([
                "-x", "http://\(proxy)", "-H", "Connection: X-Secret", "-H", "X-Secret: 1", "-H", "Keep-Alive: timeout=5",
                "-H", "Proxy-Connection: keep-alive", "-H", "TE: trailers", "-H", "Upgrade: h2c", "-H", "X-Kept: yes",
                "-H", "Proxy-Authorization: Basic eDp5", ProxyLab.http(lab, "www.example.test", "/headers"),
            ])
            let lines = result.standardOutput.split(separator: "\n").map { $0.lowercased() }
            #expect(lines.contains("via: 1.1 hostpin"))
            #expect(lines.contains("x-kept: yes"))
            #expect(lines.contains("host: www.example.test:\(lab.httpPort)"))
            for removed in ["x-secret", "keep-alive", "proxy-connection", "te", "upgrade", "proxy-authorization"] {
                #expect(!lines.contains { $0.hasPrefix(removed + ":") }, "\(removed) reached the origin")
            }
        }
    }

    @Test func responseCarriesViaAndNoHopByHopFields() async throws {
        try await ProxyLab.withProxy { proxy, lab, _ in
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", "-D", "-", "-o", "/dev/null",
                                                  ProxyLab.http(lab, "www.example.test", "/bytes/10")])
            let lines = result.standardOutput.split(separator: "\r\n").map { $0.lowercased() }
            #expect(lines.first == "http/1.1 200 ok")
            #expect(lines.contains("via: 1.1 hostpin"))
            #expect(lines.contains("content-length: 10"))
            #expect(!lines.contains { $0.hasPrefix("connection:") })
        }
    }

    @Test func tenMebibytePostArrivesIntact() async throws {
        let file = try await ProxyLab.randomFile(bytes: 10 << 20)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let expected = try await ProxyLab.sha256(of: file)
        try await ProxyLab.withProxy { proxy, lab, _ in
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", "--data-binary", "@\(file)",
                                                  ProxyLab.http(lab, "www.example.test", "/echo")])
            #expect(result.standardOutput == "origin=www host=www.example.test:\(lab.httpPort) method=POST length=\(10 << 20) sha256=\(expected)\n")
        }
    }

    /// An origin that answers before it has read the body (`/whoami` never reads it): the client must get
    /// the response and finish sending, twice on one connection. Before, the proxy cut the client off
    /// while the body was still arriving, and curl failed with exit 55 (send failure: broken pipe).
    @Test func answerBeforeTheWholeBodyLeavesTheUploadWhole() async throws {
        let file = try await ProxyLab.randomFile(bytes: 3_000_000)
        defer { try? FileManager.default.removeItem(atPath: file) }
        try await ProxyLab.withProxy { proxy, lab, _ in
            let url = ProxyLab.http(lab, "www.example.test", "/whoami")
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", "-w", "[%{num_connects}]\n",
                                                  "--data-binary", "@\(file)", url, "--data-binary", "@\(file)", url])
            #expect(result.status == 0, "\(result.standardError)")
            let answer = "origin=www host=www.example.test:\(lab.httpPort)\n"
            #expect(result.standardOutput == answer + "[1]\n" + answer + "[0]\n")
        }
    }

    @Test func chunkedUploadArrivesIntact() async throws {
        let file = try await ProxyLab.randomFile(bytes: 3 << 20 + 12345)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let expected = try await ProxyLab.sha256(of: file)
        try await ProxyLab.withProxy { proxy, lab, _ in
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", "-H", "Transfer-Encoding: chunked",
                                                  "--data-binary", "@\(file)", ProxyLab.http(lab, "www.example.test", "/echo")])
            #expect(result.standardOutput == "origin=www host=www.example.test:\(lab.httpPort) method=POST length=\(3 << 20 + 12345) sha256=\(expected)\n")
        }
    }

    @Test func chunkedResponseIsRelayedChunked() async throws {
        let body = "5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n"
        let origin = try TestSockets.scriptedOrigin(response: Array(("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
            + "Connection: keep-alive, X-Drop\r\nX-Drop: 1\r\n\r\n" + body).utf8))
        try await ProxyLab.withProxy { proxy, _, _ in
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", "-D", "/dev/stderr",
                                                  "http://127.0.0.1:\(origin.port)/chunked"])
            #expect(result.standardOutput == "hello, world")
            let head = result.standardError.lowercased()
            #expect(head.contains("transfer-encoding: chunked"))
            #expect(!head.contains("x-drop"))
            let request = try await origin.request.value
            #expect(request.hasPrefix("GET /chunked HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n"))
        }
    }

    /// RFC 9110 §2.5: a request in HTTP/1.2 is processed as HTTP/1.1, forwarded and answered in 1.1
    /// (HTTP/2.0 and above stay 505: RefusalTests). Before, it was refused with 505.
    @Test func http12RequestIsForwardedAndAnsweredAsHTTP11() async throws {
        let origin = try TestSockets.scriptedOrigin(response: Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8))
        try await ProxyLab.withProxy { proxy, _, log in
            let reply = try await TestSockets.exchange(proxy, Array(("GET http://127.0.0.1:\(origin.port)/v HTTP/1.2\r\n"
                + "Host: x\r\nConnection: close\r\n\r\n").utf8))
            #expect(reply.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(reply.hasSuffix("\r\n\r\nok"))
            let request = try await origin.request.value
            #expect(request.hasPrefix("GET /v HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n"))
            #expect(request.contains("\r\nVia: 1.1 hostpin\r\n"))
            #expect((await log.waitFor(1)).first?.status == 200)
        }
    }

    @Test func responseWithoutLengthEndsAtCloseAndClosesTheClient() async throws {
        let origin = try TestSockets.scriptedOrigin(response: Array("HTTP/1.0 200 OK\r\n\r\nuntil close".utf8))
        try await ProxyLab.withProxy { proxy, _, log in
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", "-D", "/dev/stderr", "http://127.0.0.1:\(origin.port)/"])
            #expect(result.standardOutput == "until close")
            #expect(result.standardError.lowercased().contains("connection: close"))
            #expect(result.standardError.lowercased().contains("via: 1.0 hostpin"))
            #expect((await log.waitFor(1)).first?.bytes == 11)
        }
    }

    /// An origin that resets after 100 of its 1000000 body bytes: the client got the head and those 100
    /// bytes, and the access log says so. Before, the line said `200 0`.
    @Test func originGoneMidBodyIsLoggedWithTheBytesThatGotThrough() async throws {
        let body = String(repeating: "x", count: 100)
        let origin = try TestSockets.scriptedOrigin(response: Array("HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n\(body)".utf8),
                                                    reset: true)
        try await ProxyLab.withProxy { proxy, _, log in
            let reply = try await TestSockets.exchange(proxy, Array("GET http://127.0.0.1:\(origin.port)/ HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            #expect(reply.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(reply.hasSuffix("\r\n\r\n\(body)"))
            let entry = try #require(await log.waitFor(1).first)
            #expect(entry.status == 200)
            #expect(entry.bytes == 100)
        }
    }

    /// Clients that send a head and part of a body and reset at once, some before the proxy has accepted
    /// them: each line names its client. Before, the address was asked of the kernel (`getpeername`) after
    /// the reset, which fails, and the line said `-`.
    @Test func clientsThatResetMidBodyAreLoggedWithTheirAddress() async throws {
        try await ProxyLab.withProxy { proxy, lab, log in
            let request = "POST \(ProxyLab.http(lab, "www.example.test", "/echo")) HTTP/1.1\r\nHost: www.example.test\r\n"
                + "Content-Length: 1000\r\n\r\n0123456789"
            let clients = try await TestSockets.resetAfterSending(proxy, Array(request.utf8), count: 20)
            #expect(clients.count == 20)
            let entries = await log.waitFor(20)
            #expect(entries.count == 20)
            #expect(entries.map { $0.client?.description ?? "-" }.sorted() == clients.map(\.description).sorted())
        }
    }
}
