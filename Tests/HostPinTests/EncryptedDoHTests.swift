import HostPin
import HostPinTestSupport
import Testing

/// DNS over HTTPS against `scripts/fault-doh`: relaying to the lab's NSD (a working DoH server over
/// HTTP/1.1), and in each of its faulty modes. What DoT does alike is in ``EncryptedTransportTests``.
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
