import Foundation
import HostPin
import HostPinTestSupport
import Testing

/// DoH and DoT against the lab's real server (Unbound: `LAB_DOH_URL`, `LAB_DOT_SERVER`, at
/// `LAB_DNS_TLS_ADDR`, certificate from `LAB_CA_FILE`), which speaks HTTP/2: queries sent at once are
/// multiplexed on one connection. Skipped while the lab has no such server.
@Suite(.enabled(if: EncryptedLabServer.current != nil, "the lab has no DoH/DoT server (LAB_DOH_URL)"))
struct EncryptedLabServerTests {
    let server: EncryptedLabServer

    init() throws {
        server = try #require(EncryptedLabServer.current)
    }

    /// 50 queries sent at once, each answered for its own name.
    private func fiftyAtOnce(on transport: any EncryptedTransport) async {
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<50 {
                group.addTask {
                    let cdn = index % 2 == 1
                    let query = EncryptedTestMessages.query(cdn ? "cdn.example.test" : "www.example.test", id: UInt16(index))
                    expectReply(await transport.exchange(query, timeout: .seconds(20)), to: query, address: [127, 0, 0, cdn ? 11 : 10])
                }
            }
        }
    }

    @Test(arguments: [false, true])
    func hundredQueriesOneAfterAnotherShareOneHandshake(dot: Bool) async throws {
        let transport = try server.upstream(dot: dot).makeTransport()
        for index in 0..<100 {
            let query = EncryptedTestMessages.query("www.example.test", id: UInt16(index))
            expectReply(await transport.exchange(query, timeout: .seconds(10)), to: query, address: [127, 0, 0, 10])
        }
        #expect(transport.handshakes == 1)
    }

    @Test(arguments: [false, true])
    func fiftyQueriesAtOnceShareOneConnection(dot: Bool) async throws {
        let transport = try server.upstream(dot: dot).makeTransport()
        await fiftyAtOnce(on: transport)
        #expect(transport.handshakes == 1)
    }
}

/// The lab's DoH/DoT server, from the environment or `.lab/env` (as ``Lab`` reads the rest).
struct EncryptedLabServer: Sendable {
    let dohURL: String
    let dotServer: String
    let address: IPAddress
    let caFile: String

    static let current: EncryptedLabServer? = {
        var values = ProcessInfo.processInfo.environment
        if values["LAB_DOH_URL"] == nil,
           let text = try? String(contentsOf: Lab.repositoryRoot.appendingPathComponent(".lab/env"), encoding: .utf8)
        {
            for line in text.split(separator: "\n") {
                let assignment = line.hasPrefix("export ") ? line.dropFirst("export ".count) : line
                guard let equals = assignment.firstIndex(of: "=") else { continue }
                values[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
                    .trimmingCharacters(in: CharacterSet(charactersIn: "'\""))
            }
        }
        guard let doh = values["LAB_DOH_URL"], let dot = values["LAB_DOT_SERVER"],
              let address = values["LAB_DNS_TLS_ADDR"].flatMap(IPAddress.init), let caFile = values["LAB_CA_FILE"]
        else { return nil }
        return EncryptedLabServer(dohURL: doh, dotServer: dot, address: address, caFile: caFile)
    }()

    /// The DoT or DoH upstream, its name bootstrapped to the lab's address, the lab CA trusted.
    func upstream(dot: Bool) throws -> EncryptedUpstream {
        let upstream = try EncryptedUpstream.parse(dot ? dotServer : dohURL)
        return try upstream.configured(bootstrap: [UpstreamBootstrap(name: upstream.name, addresses: [address])], pins: [],
                                       extraCAFile: caFile)
    }
}
