import Foundation
import HostPin
import HostPinTestSupport

/// `scripts/fault-doh`, a DoH or DoT server in one misbehaving mode (or relaying to a real DNS server),
/// started for one test on a free 127.0.0.1 port with the test PKI's certificate and stopped by its PID.
final class EncryptedFaultServer: Sendable {
    enum TransportProtocol: String, Sendable {
        case doh, dot
    }

    let port: UInt16
    let transportProtocol: TransportProtocol
    private let server: ScriptServer
    private var directory: URL { server.directory }

    /// Starts the server on `port` (0: a free one); returns once it reports `READY`.
    init(_ transportProtocol: TransportProtocol, mode: String, upstream: Upstream?, pki: EncryptedTestPKI,
         listen: IPAddress = .loopbackV4, port: UInt16 = 0) async throws
    {
        self.transportProtocol = transportProtocol
        server = try await ScriptServer(script: "fault-doh") { directory in
            var arguments = ["--protocol", transportProtocol.rawValue, "--listen", "\(listen.uriHost):\(port)", "--mode", mode,
                             "--cert", pki.certificateFile, "--key", pki.keyFile,
                             "--log", directory.appendingPathComponent("events.log").path]
            if let upstream { arguments += ["--upstream", upstream.description] }
            return arguments
        }
        guard let port = server.readyAddress.split(separator: ":").last.flatMap({ UInt16($0) }) else {
            server.stop()
            throw ScriptServer.StartFailure(description: "scripts/fault-doh reported no port: \(server.readyAddress)")
        }
        self.port = port
    }

    /// TLS handshakes the server completed so far.
    var handshakes: Int { events.filter { $0 == "handshake" }.count }
    /// Queries the server received so far.
    var queries: Int { events.filter { $0 == "query" }.count }

    private var events: [Substring] {
        let text = (try? String(contentsOf: directory.appendingPathComponent("events.log"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n")
    }

    /// An upstream naming this server: `https://NAME:PORT/dns-query` or `tls://NAME:PORT`, where NAME is
    /// a host name bootstrapped to `bootstrap`, or an IP literal; the test CA trusted unless `trustCA`
    /// is false.
    func upstream(name: String = "dns.example.test", bootstrap: [IPAddress] = [.loopbackV4], pins: [String] = [],
                  trustCA: Bool = true, pki: EncryptedTestPKI) throws -> EncryptedUpstream
    {
        let text = switch transportProtocol {
        case .doh: "https://\(name):\(port)/dns-query"
        case .dot: "tls://\(name):\(port)"
        }
        var upstream = try EncryptedUpstream.parse(text)
        if upstream.name.literalAddress == nil { upstream.bootstrap = bootstrap }
        upstream.pins = try pins.map { try PublicKeyPin.parse($0) }
        upstream.extraCAFile = trustCA ? pki.caFile : nil
        return upstream
    }

    /// Stops the server and waits until it is gone (its port closed).
    func stopAndWait() async throws { try await server.stopAndWait() }

    /// Stops the server by its PID and removes its files. Idempotent.
    func stop() { server.stop() }
}
