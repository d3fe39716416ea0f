import HostPin
import HostPinTestSupport
import Testing

/// DNS over HTTPS against `scripts/fault-doh`: relaying to the lab's NSD (a working DoH server over
/// HTTP/1.1), and in each of its faulty modes.
@Suite struct EncryptedDoHTests {
    let lab: Lab

    init() throws {
        lab = try Lab.current()
    }

    private func start(_ mode: String) async throws -> (EncryptedFaultServer, EncryptedTestPKI) {
        let pki = try await EncryptedTestPKI.shared
        return (try await EncryptedFaultServer(.doh, mode: mode, upstream: lab.trustedDNS, pki: pki), pki)
    }

    private let www = EncryptedTestMessages.query("www.example.test", id: 0xABCD)

    @Test func relayedReplyForWwwCarries127_0_0_10() async throws {
        let (server, pki) = try await start("relay")
        let transport = try server.upstream(pki: pki).makeTransport()
        #expect(transport is DoHTransport)
        expectReply(await transport.exchange(www, timeout: .seconds(10)), to: www, address: [127, 0, 0, 10])
        #expect(server.queries == 1)
    }

    @Test func upstreamNamedByItsAddressNeedsNoBootstrap() async throws {
        let (server, pki) = try await start("relay")
        let upstream = try server.upstream(name: "127.0.0.1", pki: pki)
        #expect(upstream.bootstrap.isEmpty)
        expectReply(await upstream.makeTransport().exchange(www, timeout: .seconds(10)), to: www, address: [127, 0, 0, 10])
    }

    @Test func serverOnIPv6IsReachedByNameAndByAddress() async throws {
        let pki = try await EncryptedTestPKI.shared
        let server = try await EncryptedFaultServer(.doh, mode: "relay", upstream: lab.trustedDNS, pki: pki, listen: .loopbackV6)
        for upstream in [try server.upstream(bootstrap: [.loopbackV6], pki: pki), try server.upstream(name: "[::1]", pki: pki)] {
            expectReply(await upstream.makeTransport().exchange(www, timeout: .seconds(10)), to: www, address: [127, 0, 0, 10])
        }
        #expect(server.handshakes == 2)
    }

    @Test func bootstrapAddressesAreTriedInOrder() async throws {
        let (server, pki) = try await start("relay")
        // Nothing listens on 127.0.0.2 at the server's port: refused at once, then the next address.
        let upstream = try server.upstream(bootstrap: [IPAddress("127.0.0.2")!, .loopbackV4], pki: pki)
        expectReply(await upstream.makeTransport().exchange(www, timeout: .seconds(10)), to: www, address: [127, 0, 0, 10])
        #expect(server.handshakes == 1)
    }

    @Test func hundredQueriesShareOneHandshake() async throws {
        let (server, pki) = try await start("relay")
        let transport = try server.upstream(pki: pki).makeTransport()
        for index in 0..<100 {
            let cdn = index % 2 == 1
            let query = EncryptedTestMessages.query(cdn ? "cdn.example.test" : "www.example.test", id: UInt16(index))
            expectReply(await transport.exchange(query, timeout: .seconds(10)), to: query, address: [127, 0, 0, cdn ? 11 : 10])
        }
        #expect(transport.handshakes == 1)
        #expect(server.handshakes == 1)
        #expect(server.queries == 100)
    }

    @Test func concurrentQueriesEachGetTheirOwnReply() async throws {
        let (server, pki) = try await start("relay")
        let transport = try server.upstream(pki: pki).makeTransport()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                group.addTask {
                    let query = EncryptedTestMessages.query(index % 2 == 0 ? "cdn.example.test" : "nx\(index).example.test", id: UInt16(index))
                    let result = await transport.exchange(query, timeout: .seconds(20))
                    if index % 2 == 0 {
                        expectReply(result, to: query, address: [127, 0, 0, 11])
                    } else {
                        expectReply(result, to: query, rcode: 3, address: nil)  // NXDOMAIN
                    }
                }
            }
        }
        #expect(server.queries == 20)
        // HTTP/1.1 (this server) cannot multiplex: curl opens what it needs, never one per query twice.
        #expect((1...20).contains(transport.handshakes))
    }

    @Test(arguments: [
        ("html", EncryptedTransportFailure.wrongContentType("text/html; charset=utf-8")),
        ("status-404", .httpStatus(404)),
        ("status-500", .httpStatus(500)),
        ("status-502", .httpStatus(502)),
        ("content-type", .wrongContentType("application/octet-stream")),
        ("cut-short", .replyCutShort),
        ("oversize", .replyTooLong),
        ("empty", .replyTooShort(octets: 0)),
    ])
    func faultyReplyFailsWithItsReason(mode: String, expected: EncryptedTransportFailure) async throws {
        let (server, pki) = try await start(mode)
        let transport = try server.upstream(pki: pki).makeTransport()
        #expect(failure(of: await transport.exchange(www, timeout: .seconds(10))) == expected)
        #expect(server.queries == 1)
    }

    @Test func serverThatNeverAnswersTimesOut() async throws {
        let (server, pki) = try await start("stall")
        let transport = try server.upstream(pki: pki).makeTransport()
        #expect(failure(of: await transport.exchange(www, timeout: .seconds(1))) == .timeout)
        #expect(server.queries == 1)
    }

    @Test func nothingListeningIsAConnectFailure() async throws {
        let (server, pki) = try await start("relay")
        let upstream = try server.upstream(pki: pki)
        try await server.stopAndWait()
        let result = await upstream.makeTransport().exchange(www, timeout: .seconds(10))
        guard case .connectFailed = failure(of: result) else {
            Issue.record("expected connectFailed, got \(result)")
            return
        }
    }

    @Test func matchingPinIsAccepted() async throws {
        let (server, pki) = try await start("relay")
        let transport = try server.upstream(pins: [pki.serverPin], pki: pki).makeTransport()
        expectReply(await transport.exchange(www, timeout: .seconds(10)), to: www, address: [127, 0, 0, 10])
        // A pin set with a backup key (RFC 7858 §4.2) matches as well.
        let backup = try server.upstream(pins: [pki.otherPin, pki.serverPin], pki: pki).makeTransport()
        expectReply(await backup.exchange(www, timeout: .seconds(10)), to: www, address: [127, 0, 0, 10])
    }

    @Test func otherPinIsAPinMismatch() async throws {
        let (server, pki) = try await start("relay")
        let transport = try server.upstream(pins: [pki.otherPin], pki: pki).makeTransport()
        #expect(failure(of: await transport.exchange(www, timeout: .seconds(10))) == .pinMismatch)
        #expect(server.queries == 0)
    }

    @Test func certificateForAnotherNameIsRefused() async throws {
        let (server, pki) = try await start("relay")
        let transport = try server.upstream(name: "other.example.test", pki: pki).makeTransport()
        let result = await transport.exchange(www, timeout: .seconds(10))
        guard case .certificateNameMismatch(let message) = failure(of: result) else {
            Issue.record("expected certificateNameMismatch, got \(result)")
            return
        }
        #expect(message.contains("other.example.test"))
        #expect(server.queries == 0)
    }

    @Test func certificateFromAnUntrustedCAIsRefused() async throws {
        let (server, pki) = try await start("relay")
        let transport = try server.upstream(trustCA: false, pki: pki).makeTransport()
        let result = await transport.exchange(www, timeout: .seconds(10))
        guard case .untrustedCertificate(let message) = failure(of: result) else {
            Issue.record("expected untrustedCertificate, got \(result)")
            return
        }
        #expect(message.contains("certificate"))
        #expect(server.queries == 0)
    }

    @Test func queryThatIsNoMessageAndNameWithoutBootstrapAreRefusedBeforeSending() async throws {
        let transport = try EncryptedUpstream.parse("https://dns.example.test/dns-query").makeTransport()
        #expect(failure(of: await transport.exchange(www, timeout: .seconds(1))) == .noBootstrapAddress(try HostName.parse("dns.example.test")))
        #expect(failure(of: await transport.exchange([1, 2, 3], timeout: .seconds(1))) == .badQuery(octets: 3))
        #expect(failure(of: await transport.exchange([UInt8](repeating: 0, count: 65_536), timeout: .seconds(1))) == .badQuery(octets: 65_536))
        #expect(transport.handshakes == 0)
    }

    @Test func cancellingTheTaskEndsTheExchangeAtOnce() async throws {
        let (server, pki) = try await start("stall")
        let transport = try server.upstream(pki: pki).makeTransport()
        let www = www
        let exchange = Task { await transport.exchange(www, timeout: .seconds(60)) }
        while server.queries == 0 { try await Task.sleep(for: .milliseconds(20)) }
        exchange.cancel()
        #expect(failure(of: await exchange.value) == .cancelled)
    }
}
