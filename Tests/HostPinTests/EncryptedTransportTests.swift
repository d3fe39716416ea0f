import HostPin
import HostPinTestSupport
import Testing

/// What DNS over HTTPS and DNS over TLS do alike, against `scripts/fault-doh` relaying to the lab's NSD:
/// answers, addressing and bootstrap, one handshake for many queries, and certificate and pin checks.
/// Each protocol's own behaviour is in ``EncryptedDoHTests`` and ``EncryptedDoTTests``.
@Suite struct EncryptedTransportTests {
    typealias TransportProtocol = EncryptedFaultServer.TransportProtocol
    static let both: [TransportProtocol] = [.doh, .dot]

    let lab: Lab

    init() throws {
        lab = try Lab.current()
    }

    private func relay(_ transportProtocol: TransportProtocol, listen: IPAddress = .loopbackV4) async throws
        -> (EncryptedFaultServer, EncryptedTestPKI)
    {
        let pki = try await EncryptedTestPKI.shared
        let server = try await EncryptedFaultServer(transportProtocol, mode: "relay", upstream: lab.trustedDNS, pki: pki,
                                                    listen: listen)
        return (server, pki)
    }

    private let www = EncryptedTestMessages.query("www.example.test", id: 0xABCD)

    @Test(arguments: both) func relayedReplyForWwwCarries127_0_0_10(_ transportProtocol: TransportProtocol) async throws {
        let (server, pki) = try await relay(transportProtocol)
        let transport = try server.upstream(pki: pki).makeTransport()
        switch transportProtocol {
        case .doh: #expect(transport is DoHTransport)
        case .dot: #expect(transport is DoTTransport)
        }
        expectReply(await transport.exchange(www, timeout: .seconds(10)), to: www, address: [127, 0, 0, 10])
        #expect(server.queries == 1)
    }

    @Test(arguments: both) func upstreamNamedByItsAddressNeedsNoBootstrap(_ transportProtocol: TransportProtocol) async throws {
        let (server, pki) = try await relay(transportProtocol)
        let upstream = try server.upstream(name: "127.0.0.1", pki: pki)
        #expect(upstream.bootstrap.isEmpty)
        expectReply(await upstream.makeTransport().exchange(www, timeout: .seconds(10)), to: www, address: [127, 0, 0, 10])
    }

    @Test(arguments: both) func serverOnIPv6IsReachedByNameAndByAddress(_ transportProtocol: TransportProtocol) async throws {
        let (server, pki) = try await relay(transportProtocol, listen: .loopbackV6)
        for upstream in [try server.upstream(bootstrap: [.loopbackV6], pki: pki), try server.upstream(name: "[::1]", pki: pki)] {
            expectReply(await upstream.makeTransport().exchange(www, timeout: .seconds(10)), to: www, address: [127, 0, 0, 10])
        }
        #expect(server.handshakes == 2)
    }

    @Test(arguments: both) func bootstrapAddressesAreTriedInOrder(_ transportProtocol: TransportProtocol) async throws {
        let (server, pki) = try await relay(transportProtocol)
        // Nothing listens on 127.0.0.2 at the server's port: refused at once, then the next address.
        let upstream = try server.upstream(bootstrap: [IPAddress("127.0.0.2")!, .loopbackV4], pki: pki)
        expectReply(await upstream.makeTransport().exchange(www, timeout: .seconds(10)), to: www, address: [127, 0, 0, 10])
        #expect(server.handshakes == 1)
    }

    @Test(arguments: both) func hundredQueriesShareOneHandshake(_ transportProtocol: TransportProtocol) async throws {
        let (server, pki) = try await relay(transportProtocol)
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

    @Test(arguments: both) func nothingListeningIsAConnectFailure(_ transportProtocol: TransportProtocol) async throws {
        let (server, pki) = try await relay(transportProtocol)
        let upstream = try server.upstream(pki: pki)
        try await server.stopAndWait()
        let result = await upstream.makeTransport().exchange(www, timeout: .seconds(10))
        guard case .connectFailed = failure(of: result) else {
            Issue.record("expected connectFailed, got \(result)")
            return
        }
    }

    @Test(arguments: both) func matchingPinIsAccepted(_ transportProtocol: TransportProtocol) async throws {
        let (server, pki) = try await relay(transportProtocol)
        let transport = try server.upstream(pins: [pki.serverPin], pki: pki).makeTransport()
        expectReply(await transport.exchange(www, timeout: .seconds(10)), to: www, address: [127, 0, 0, 10])
        // A pin set with a backup key (RFC 7858 §4.2) matches as well.
        let backup = try server.upstream(pins: [pki.otherPin, pki.serverPin], pki: pki).makeTransport()
        expectReply(await backup.exchange(www, timeout: .seconds(10)), to: www, address: [127, 0, 0, 10])
    }

    @Test(arguments: both) func otherPinIsAPinMismatch(_ transportProtocol: TransportProtocol) async throws {
        let (server, pki) = try await relay(transportProtocol)
        let transport = try server.upstream(pins: [pki.otherPin], pki: pki).makeTransport()
        #expect(failure(of: await transport.exchange(www, timeout: .seconds(10))) == .pinMismatch)
        #expect(server.queries == 0)
    }

    @Test(arguments: both) func certificateForAnotherNameIsRefused(_ transportProtocol: TransportProtocol) async throws {
        let (server, pki) = try await relay(transportProtocol)
        let transport = try server.upstream(name: "other.example.test", pki: pki).makeTransport()
        let result = await transport.exchange(www, timeout: .seconds(10))
        guard case .certificateNameMismatch(let message) = failure(of: result) else {
            Issue.record("expected certificateNameMismatch, got \(result)")
            return
        }
        #expect(message.contains("other.example.test"))
        #expect(server.queries == 0)
    }

    @Test(arguments: both) func certificateFromAnUntrustedCAIsRefused(_ transportProtocol: TransportProtocol) async throws {
        let (server, pki) = try await relay(transportProtocol)
        let transport = try server.upstream(trustCA: false, pki: pki).makeTransport()
        let result = await transport.exchange(www, timeout: .seconds(10))
        guard case .untrustedCertificate(let message) = failure(of: result) else {
            Issue.record("expected untrustedCertificate, got \(result)")
            return
        }
        #expect(message.contains("certificate"))
        #expect(server.queries == 0)
    }
}
