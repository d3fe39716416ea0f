import Foundation
import HostPin
import HostPinProxy
import HostPinTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A keep-alive client's requests after its first, served by the proxy's ``KeepAliveRelay`` on the
/// event loop's callbacks, and what it hands back to the connection's task: each exchange must come
/// out as the task's would (bodies whole and in order, one origin connection, the access log's entries),
/// whichever of the two serves it.
@Suite struct KeepAliveRelayTests {
    @Test func manyRequestsOnOneConnectionAreRelayedWholeOverOneOriginConnection() async throws {
        // Bodies of every size the relay meets: none, small, one buffer (16 KiB) and more than one.
        let sizes = [0, 1, 100, 16 * 1024, 16 * 1024 + 1, 40_000, 7] + Array(repeating: 20, count: 23)
        let bodies = sizes.enumerated().map { index, size in String((0..<size).map { _ in Character(UnicodeScalar(97 + index % 26)!) }) }
        let origin = try CountingOrigin { _, index in .respond(CountingOrigin.ok(bodies[index]), thenClose: false) }
        defer { origin.stop() }
        try await ProxyLab.withProxy { proxy, _, log in
            let urls = bodies.indices.map { "http://127.0.0.1:\(origin.port)/r\($0)" }
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)"] + urls)
            #expect(result.standardOutput == bodies.joined(), "\(result.standardError)")
            #expect(origin.accepted == 1)
            #expect(origin.requests.map(\.line) == bodies.indices.map { "GET /r\($0) HTTP/1.1" })
            let entries = await log.waitFor(bodies.count)
            #expect(entries.map(\.status) == Array(repeating: 200, count: bodies.count))
            #expect(entries.map(\.bytes) == sizes.map(UInt64.init))
            #expect(entries.map(\.target) == urls)
            #expect(Set(entries.compactMap(\.pinned)) == [SocketAddress(address: .loopbackV4, port: origin.port)])
        }
    }

    @Test func responsesTheRelayDoesNotRelayAreHandedToTheTaskInOrder() async throws {
        let script: [String] = [
            CountingOrigin.ok("a"),
            CountingOrigin.ok("b"),
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nccc\r\n0\r\n\r\n",
            CountingOrigin.ok("d"),
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\ne",
            "HTTP/1.1 204 No Content\r\n\r\n",
            CountingOrigin.ok("f"),
            // HTTP/1.0: relayed by the task, and its connection is not kept.
            "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\ng",
        ]
        let origin = try CountingOrigin { connection, index in
            .respond(connection == 0 ? script[index] : CountingOrigin.ok("h\(index)"), thenClose: false)
        }
        defer { origin.stop() }
        try await ProxyLab.withProxy { proxy, _, log in
            let urls = (0...9).map { "http://127.0.0.1:\(origin.port)/r\($0)" }
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)"] + urls)
            #expect(result.standardOutput == "abcccdefgh0h1", "\(result.standardError)")
            #expect(origin.accepted == 2)
            let entries = await log.waitFor(urls.count)
            #expect(entries.map(\.status) == [200, 200, 200, 200, 200, 204, 200, 200, 200, 200])
            #expect(entries.map(\.bytes) == [1, 1, 3, 1, 1, 0, 1, 1, 2, 2])
        }
    }

    @Test func requestsTheRelayDoesNotServeGoToTheTaskAndTheConnectionGoesOn() async throws {
        let first = try CountingOrigin { connection, index in
            // The third request is the HEAD: its response has no body.
            .respond(connection == 0 && index == 2 ? "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\n"
                         : CountingOrigin.ok("1:\(connection).\(index);"), thenClose: false)
        }
        let second = try CountingOrigin { connection, index in .respond(CountingOrigin.ok("2:\(connection).\(index);"), thenClose: false) }
        defer {
            first.stop()
            second.stop()
        }
        try await ProxyLab.withProxy { proxy, _, log in
            let one = "http://127.0.0.1:\(first.port)"
            let two = "http://127.0.0.1:\(second.port)"
            // HEAD (served by the relay: no body after the head), another origin (the task: the kept
            // connection is closed), back to the first one (a new connection), an OPTIONS (the task).
            let result = try await ProxyLab.curl(["-x", "http://\(proxy)", "-w", "[%{num_connects}]", "\(one)/a", "\(one)/b",
                                                  "--next", "-x", "http://\(proxy)", "-I", "-w", "[%{num_connects}]", "\(one)/c",
                                                  "--next", "-x", "http://\(proxy)", "-w", "[%{num_connects}]", "\(two)/d", "\(one)/e",
                                                  "--next", "-x", "http://\(proxy)", "-X", "OPTIONS", "-w", "[%{num_connects}]", "\(one)/f",
                                                  "--next", "-x", "http://\(proxy)", "-w", "[%{num_connects}]", "\(one)/g"])
            let output = result.standardOutput.replacingOccurrences(of: "\r\n", with: "|")
            #expect(output.hasPrefix("1:0.0;[1]1:0.1;[0]HTTP/1.1 200 OK|Content-Length: 6|"), "\(output) \(result.standardError)")
            #expect(output.hasSuffix("|[0]2:0.0;[0]1:1.0;[0]1:1.1;[0]1:1.2;[0]"), "\(output)")
            #expect(first.accepted == 2)
            #expect(second.accepted == 1)
            #expect(first.requests.map(\.line) == ["GET /a HTTP/1.1", "GET /b HTTP/1.1", "HEAD /c HTTP/1.1", "GET /e HTTP/1.1",
                                                   "OPTIONS /f HTTP/1.1", "GET /g HTTP/1.1"])
            #expect((await log.waitFor(7)).map(\.bytes) == [6, 6, 0, 6, 6, 6, 6])
        }
    }

    @Test func rulesLoadedBetweenTwoRequestsOfAConnectionDecideTheNext() async throws {
        // A name (rules never apply to IP literals), resolved once and then read from the cache.
        let lab = try Lab.current()
        let (proxy, address, _) = try ProxyLab.startProxy()
        do {
            let client = try #require(LoadClient.connect(address, timeout: .seconds(10)))
            defer { close(client) }
            let authority = "www.example.test:\(lab.httpPort)"
            let request = "GET http://\(authority)/whoami HTTP/1.1\r\nHost: \(authority)\r\n\r\n"
            for _ in 0..<3 {
                #expect(try await Self.exchange(client, request).hasSuffix("\r\n\r\norigin=www host=\(authority)\n"))
            }
            let block = try Rules(json: Data(#"{"rules": [{"action": "block", "host": "www.example.test"}]}"#.utf8),
                                  relativeTo: URL(fileURLWithPath: "/"))
            proxy.liveRules.replace(with: block)
            #expect(try await Self.exchange(client, request).hasPrefix("HTTP/1.1 403 Forbidden\r\n"))
            await proxy.stop()
        } catch {
            await proxy.stop()
            throw error
        }
    }

    @Test func anOriginThatGoesSilentIsAnswered504AtTheOriginTimeout() async throws {
        // The origin answers the first two requests and never the third: the relay's wait for the
        // response head ends at the origin timeout, with the task's 504.
        let origin = try SilentAfter(count: 2)
        defer { origin.stop() }
        let (proxy, address, log) = try ProxyLab.startProxy { $0.originTimeout = .milliseconds(500) }
        do {
            let client = try #require(LoadClient.connect(address, timeout: .seconds(10)))
            defer { close(client) }
            let request = "GET http://127.0.0.1:\(origin.port)/x HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\r\n"
            #expect(try await Self.exchange(client, request).hasSuffix("\r\n\r\nok"))
            #expect(try await Self.exchange(client, request).hasSuffix("\r\n\r\nok"))
            let started = ContinuousClock.now
            #expect(try await Self.exchange(client, request).hasPrefix("HTTP/1.1 504 "))
            #expect(ContinuousClock.now - started < .seconds(5))
            #expect((await log.waitFor(3)).map(\.status) == [200, 200, 504])
            await proxy.stop()
        } catch {
            await proxy.stop()
            throw error
        }
    }

    /// A stop that cuts a request waiting for its response head logs it as the connection's task logs
    /// one it cuts there: the relay's request (the third on a kept connection) and the task's (the
    /// first on a new one) give the same entry.
    @Test(arguments: [0, 2])
    func aRequestCutWhileItsResponseIsAwaitedIsLoggedAsTheTaskLogsIt(answered: Int) async throws {
        let origin = try SilentAfter(count: answered)
        defer { origin.stop() }
        let (proxy, address, log) = try ProxyLab.startProxy()
        do {
            let client = try #require(LoadClient.connect(address, timeout: .seconds(10)))
            defer { close(client) }
            let request = "GET http://127.0.0.1:\(origin.port)/x HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\r\n"
            for _ in 0..<answered {
                #expect(try await Self.exchange(client, request).hasSuffix("\r\n\r\nok"))
            }
            let bytes = Array(request.utf8)
            #expect(bytes.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count)
            try await Task.sleep(for: .milliseconds(300))  // the request reaches the origin, which never answers
            await proxy.stop(grace: .milliseconds(100))
            let entries = await log.waitFor(answered + 1)
            #expect(entries.map(\.status) == Array(repeating: 200, count: answered) + [502])
            #expect(entries.last?.target == "http://127.0.0.1:\(origin.port)/x")
            #expect(entries.last?.bytes == 0)
        } catch {
            await proxy.stop()
            throw error
        }
    }

    /// Sends `request` on the blocking socket `client` and reads one `Content-Length`-framed response
    /// (a thread of its own, not the cooperative pool the proxy runs on).
    static func exchange(_ client: Int32, _ request: String) async throws -> String {
        try await TestSockets.offPool {
            let bytes = Array(request.utf8)
            guard bytes.withUnsafeBytes({ send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count else {
                throw TestSockets.Failure(description: "send failed: errno \(errno)")
            }
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                if let end = LoadClient.endOfHead(received) {
                    let head = String(decoding: received[..<end], as: UTF8.self).lowercased()
                    let length = head.components(separatedBy: "\r\n").first { $0.hasPrefix("content-length:") }
                        .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                    if received.count >= end + length { return String(decoding: received, as: UTF8.self) }
                }
                let count = recv(client, &buffer, buffer.count, 0)
                guard count > 0 else { throw TestSockets.Failure(description: "closed or timed out after \(received.count) bytes") }
                received.append(contentsOf: buffer[..<count])
            }
        }
    }
}

/// An origin on `127.0.0.1` that answers its first `count` requests with `ok` and then reads on without
/// ever answering again.
private final class SilentAfter: Sendable {
    let port: UInt16
    private let descriptor: Int32

    init(count: Int) throws {
        (descriptor, port) = try TestSockets.bindLoopback(listening: true)
        let descriptor = descriptor
        Thread {
            while true {
                let client = accept(descriptor, nil, nil)
                guard client >= 0 else { return }
                Thread {
                    defer { close(client) }
                    var received: [UInt8] = []
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    var answered = 0
                    while true {
                        let read = recv(client, &buffer, buffer.count, 0)
                        guard read > 0 else { return }
                        received.append(contentsOf: buffer[..<read])
                        while answered < count, let end = LoadClient.endOfHead(received) {
                            received.removeFirst(end)
                            answered += 1
                            let reply = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8)
                            _ = reply.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                        }
                    }
                }.start()
            }
        }.start()
    }

    deinit { close(descriptor) }

    func stop() { shutdown(descriptor, Int32(SHUT_RDWR)) }
}
