import Foundation
import HostPin
import HostPinProxy
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Origin connections kept open between the requests of one client connection: counted at an
/// in-test origin that numbers the connections it accepts.
@Suite struct OriginReuseTests {
    @Test func twoRequestsOnOneClientConnectionMakeOneOriginConnection() async throws {
        let origin = try CountingOrigin { _, index in .respond(CountingOrigin.ok(index == 0 ? "one" : "two"), thenClose: false) }
        defer { origin.stop() }
        try await ProxyLab.withProxy { proxy, _, log in
            let base = "http://127.0.0.1:\(origin.port)"
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", "-w", "[%{num_connects}]", "\(base)/a", "\(base)/b"])
            #expect(result.standardOutput == "one[1]two[0]", "\(result.standardError)")
            #expect(origin.accepted == 1)
            #expect(origin.requests == [.init(connection: 0, line: "GET /a HTTP/1.1"), .init(connection: 0, line: "GET /b HTTP/1.1")])
            #expect((await log.waitFor(2)).map(\.status) == [200, 200])
        }
    }

    @Test func originConnectionClosedBetweenRequestsIsReplaced() async throws {
        // The origin answers the first request and closes (as a server ending an idle keep-alive).
        let origin = try CountingOrigin { connection, index in
            .respond(CountingOrigin.ok("c\(connection)r\(index)"), thenClose: connection == 0)
        }
        defer { origin.stop() }
        try await ProxyLab.withProxy { proxy, _, _ in
            let base = "http://127.0.0.1:\(origin.port)"
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", "-w", "[%{num_connects}]", "\(base)/a", "\(base)/b"])
            #expect(result.standardOutput == "c0r0[1]c1r0[0]", "\(result.standardError)")
            #expect(origin.accepted == 2)
        }
    }

    @Test func keptConnectionDeadAtTheNextRequestIsRetriedOnceForGET() async throws {
        // The kept connection passes the proxy's check, then the origin closes it on reading the
        // second request, without a response byte.
        let origin = try CountingOrigin { connection, index in
            connection == 0 && index == 1 ? .closeWithoutAnswer : .respond(CountingOrigin.ok("c\(connection)r\(index)"), thenClose: false)
        }
        defer { origin.stop() }
        try await ProxyLab.withProxy { proxy, _, log in
            let base = "http://127.0.0.1:\(origin.port)"
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", "\(base)/a", "\(base)/b"])
            #expect(result.standardOutput == "c0r0c1r0", "\(result.standardError)")
            #expect(origin.accepted == 2)
            #expect(origin.requests == [.init(connection: 0, line: "GET /a HTTP/1.1"), .init(connection: 0, line: "GET /b HTTP/1.1"),
                                        .init(connection: 1, line: "GET /b HTTP/1.1")])
            #expect((await log.waitFor(2)).map(\.status) == [200, 200])
        }
    }

    @Test func requestWithBodyIsNotRetriedOnADeadKeptConnection() async throws {
        let origin = try CountingOrigin { connection, index in
            connection == 0 && index == 1 ? .closeWithoutAnswer : .respond(CountingOrigin.ok("c\(connection)r\(index)"), thenClose: false)
        }
        defer { origin.stop() }
        try await ProxyLab.withProxy { proxy, _, _ in
            let base = "http://127.0.0.1:\(origin.port)"
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", "-w", " %{http_code}\n", "\(base)/a",
                                                  "--next", "-x", "http://\(proxy)", "-w", " %{http_code}\n", "-d", "x", "\(base)/b"])
            let lines = result.standardOutput.split(separator: "\n")
            #expect(lines.first == "c0r0 200")
            #expect(lines.last?.hasSuffix(" 502") == true, "\(result.standardOutput)")
            #expect(origin.accepted == 1)
        }
    }

    @Test func responseWithConnectionCloseIsNotReused() async throws {
        // The origin says `Connection: close` but leaves the socket open: the proxy must not send another
        // request on it. The client's connection stays open (the field is hop-by-hop).
        let origin = try CountingOrigin { connection, _ in
            .respond(CountingOrigin.ok("c\(connection)", extra: "Connection: close\r\n"), thenClose: false)
        }
        defer { origin.stop() }
        try await ProxyLab.withProxy { proxy, _, _ in
            let base = "http://127.0.0.1:\(origin.port)"
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", "-w", "[%{num_connects}]", "\(base)/a", "\(base)/b"])
            #expect(result.standardOutput == "c0[1]c1[0]", "\(result.standardError)")
            #expect(origin.accepted == 2)
            #expect(origin.requests.map(\.connection) == [0, 1])
        }
    }

    @Test func http10ResponseIsNotReused() async throws {
        let origin = try CountingOrigin { connection, _ in
            .respond("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nc\(connection)", thenClose: false)
        }
        defer { origin.stop() }
        try await ProxyLab.withProxy { proxy, _, _ in
            let base = "http://127.0.0.1:\(origin.port)"
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", "\(base)/a", "\(base)/b"])
            #expect(result.standardOutput == "c0c1", "\(result.standardError)")
            #expect(origin.accepted == 2)
        }
    }

    @Test func idleKeptConnectionIsClosedAfterTheKeepAliveTimeout() async throws {
        let origin = try CountingOrigin { _, _ in .respond(CountingOrigin.ok("kept"), thenClose: false) }
        defer { origin.stop() }
        try await ProxyLab.withProxy({ $0.originKeepAlive = .milliseconds(200) }) { proxy, _, _ in
            // A raw client that keeps its connection to the proxy open after one response.
            let request = "GET http://127.0.0.1:\(origin.port)/a HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\r\n"
            let closedWhileClientOpen = try await TestSockets.offPool { () throws -> (String, Int, Int) in
                let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                defer { close(descriptor) }
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = proxy.port.bigEndian
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                var timeout = timeval(tv_sec: 10, tv_usec: 0)
                setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                let status = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
                guard status == 0 else { throw TestSockets.Failure(description: "connect failed") }
                _ = Array(request.utf8).withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                var received: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 4096)
                while !received.ends(with: Array("kept".utf8)) {
                    let count = recv(descriptor, &buffer, buffer.count, 0)
                    if count <= 0 { break }
                    received.append(contentsOf: buffer[..<count])
                }
                let before = origin.closedByPeer
                var waited = 0
                while origin.closedByPeer == before && waited < 300 {
                    usleep(10_000)
                    waited += 1
                }
                return (String(decoding: received, as: UTF8.self), before, origin.closedByPeer)
            }
            #expect(closedWhileClientOpen.0.hasSuffix("\r\n\r\nkept"))
            #expect(closedWhileClientOpen.1 == 0)
            #expect(closedWhileClientOpen.2 == 1)
            #expect(origin.accepted == 1)
        }
    }
}
