import HostPin
import HostPinTestSupport
import Testing

/// DNS over TLS against `scripts/fault-doh --protocol dot`: relaying to the lab's NSD (a working DoT
/// server), answering out of order, and in each of its faulty modes. What DoH does alike is in
/// ``EncryptedTransportTests``.
@Suite struct EncryptedDoTTests {
    let lab: Lab

    init() throws {
        lab = try Lab.current()
    }

    private func start(_ mode: String) async throws -> (EncryptedFaultServer, EncryptedTestPKI) {
        let pki = try await EncryptedTestPKI.shared
        return (try await EncryptedFaultServer(.dot, mode: mode, upstream: lab.trustedDNS, pki: pki), pki)
    }

    private let www = EncryptedTestMessages.query("www.example.test", id: 0xABCD)

    /// 50 queries that all carry the same message ID (as independent callers may), for www, cdn and
    /// names that do not exist, sent at once on `transport`; each must get the reply to its own question.
    private func fiftyAtOnce(on transport: any EncryptedTransport) async {
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<50 {
                group.addTask {
                    let name = switch index % 5 {
                    case 0: "www.example.test"
                    case 1: "cdn.example.test"
                    default: "nx\(index).example.test"
                    }
                    let query = EncryptedTestMessages.query(name, id: 0x4242)
                    let result = await transport.exchange(query, timeout: .seconds(20))
                    switch index % 5 {
                    case 0: expectReply(result, to: query, address: [127, 0, 0, 10])
                    case 1: expectReply(result, to: query, address: [127, 0, 0, 11])
                    default: expectReply(result, to: query, rcode: 3, address: nil)  // NXDOMAIN
                    }
                }
            }
        }
    }

    @Test func fiftyConcurrentQueriesOnOneConnectionAreEachMatchedToTheirReply() async throws {
        let (server, pki) = try await start("relay")
        let transport = try server.upstream(pki: pki).makeTransport()
        await fiftyAtOnce(on: transport)
        #expect(transport.handshakes == 1)
        #expect(server.handshakes == 1)
        #expect(server.queries == 50)
    }

    @Test func repliesInReverseOrderAreMatchedByID() async throws {
        let (server, pki) = try await start("reverse")
        let transport = try server.upstream(pki: pki).makeTransport()
        await fiftyAtOnce(on: transport)
        #expect(transport.handshakes == 1)
        #expect(server.queries == 50)
    }

    @Test func replyWithAnUnknownIDIsIgnored() async throws {
        let (server, pki) = try await start("stray-id")
        let transport = try server.upstream(pki: pki).makeTransport()
        for _ in 0..<3 {
            expectReply(await transport.exchange(www, timeout: .seconds(10)), to: www, address: [127, 0, 0, 10])
        }
        #expect(transport.handshakes == 1)  // the stray replies did not cost the connection
    }

    @Test func connectionTheServerClosedIsReplacedForTheNextQuery() async throws {
        let (server, pki) = try await start("one-shot")
        let transport = try server.upstream(pki: pki).makeTransport()
        expectReply(await transport.exchange(www, timeout: .seconds(10)), to: www, address: [127, 0, 0, 10])
        // The server closed the connection after that reply, as one closes an idle connection: give the
        // close time to arrive, so that the next query meets a closed connection, not a closing one.
        try await Task.sleep(for: .milliseconds(300))
        let cdn = EncryptedTestMessages.query("cdn.example.test", id: 7)
        expectReply(await transport.exchange(cdn, timeout: .seconds(10)), to: cdn, address: [127, 0, 0, 11])
        #expect(transport.handshakes == 2)
        #expect(server.handshakes == 2)
    }

    @Test func serverClosingRightAfterTheHandshakeFailsTheQueryAsClosed() async throws {
        let (server, pki) = try await start("close")
        let transport = try server.upstream(pki: pki).makeTransport()
        #expect(failure(of: await transport.exchange(www, timeout: .seconds(10))) == .connectionClosed)
        #expect(server.handshakes == 1)
    }

    @Test func halfALengthPrefixThenNothingTimesOutAndDropsTheConnection() async throws {
        let (server, pki) = try await start("half-prefix")
        let transport = try server.upstream(pki: pki).makeTransport()
        #expect(failure(of: await transport.exchange(www, timeout: .seconds(1))) == .timeout)
        #expect(server.queries == 1)
        // The stalled connection was dropped: the next query goes out on a new one.
        #expect(failure(of: await transport.exchange(www, timeout: .seconds(1))) == .timeout)
        #expect(transport.handshakes == 2)
        #expect(server.handshakes == 2)
        #expect(server.queries == 2)
    }

    @Test func connectionThatFellSilentIsDroppedWhenAQueryTimesOut() async throws {
        let (server, pki) = try await start("silent")
        let transport = try server.upstream(pki: pki).makeTransport()
        #expect(failure(of: await transport.exchange(www, timeout: .seconds(1))) == .timeout)
        // Nothing came back on that connection since the query went out: the next query opens another.
        #expect(failure(of: await transport.exchange(www, timeout: .seconds(1))) == .timeout)
        #expect(transport.handshakes == 2)
        #expect(server.handshakes == 2)
    }

    @Test func cancellingAQueryInFlightKeepsTheConnectionForTheOthers() async throws {
        let (server, pki) = try await start("ignore-first")
        let transport = try server.upstream(pki: pki).makeTransport()
        let unanswered = Task { await transport.exchange(EncryptedTestMessages.query("cdn.example.test", id: 1), timeout: .seconds(60)) }
        while server.queries == 0 { try await Task.sleep(for: .milliseconds(20)) }
        unanswered.cancel()
        #expect(failure(of: await unanswered.value) == .cancelled)
        expectReply(await transport.exchange(www, timeout: .seconds(10)), to: www, address: [127, 0, 0, 10])
        #expect(transport.handshakes == 1)
    }

    @Test func cancelledBeforeItStartsSendsNothing() async throws {
        let (server, pki) = try await start("relay")
        let transport = try server.upstream(pki: pki).makeTransport()
        let www = www
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await transport.exchange(www, timeout: .seconds(10))
        }
        #expect(failure(of: await cancelled.value) == .cancelled)
        #expect(transport.handshakes == 0)
    }

    @Test func oneQueryTimingOutWhileOthersAreAnsweredKeepsTheConnection() async throws {
        let (server, pki) = try await start("ignore-first")
        let transport = try server.upstream(pki: pki).makeTransport()
        let unanswered = Task { await transport.exchange(EncryptedTestMessages.query("cdn.example.test", id: 1), timeout: .seconds(2)) }
        while server.queries == 0 { try await Task.sleep(for: .milliseconds(20)) }
        expectReply(await transport.exchange(www, timeout: .seconds(10)), to: www, address: [127, 0, 0, 10])
        #expect(failure(of: await unanswered.value) == .timeout)
        // The server kept answering after the lost query went out: the connection is alive and kept.
        expectReply(await transport.exchange(www, timeout: .seconds(10)), to: www, address: [127, 0, 0, 10])
        #expect(transport.handshakes == 1)
        #expect(server.handshakes == 1)
    }
}
