import Foundation
import HostPin

/// A DNS server that misbehaves on purpose (`scripts/fault-dns`, Python + dnslib), started for one test on
/// a free 127.0.0.1 port (UDP and TCP) and stopped by its PID.
///
/// Its instance ``Mode`` applies to every query and can be changed while it runs (``setMode(_:)``);
/// answers are relayed from `upstream`. Every query it receives is logged, so tests count them exactly
/// (``queries``).
public final class FaultServer: Sendable {
    /// What the server does with a query.
    public enum Mode: Sendable, Hashable {
        /// Relay the query to the upstream and its answer back.
        case answer
        /// Answer RCODE 2, SERVFAIL.
        case servfail
        /// Answer RCODE 5, REFUSED.
        case refused
        /// Answer RCODE 3, NXDOMAIN.
        case nxdomain
        /// Never answer: a black hole.
        case drop
        /// Wait, then answer.
        case delay(Duration)
        /// Over UDP an empty answer with the TC bit set; over TCP the real answer.
        case truncate
        /// Over UDP the TC bit; over TCP the connection is closed unanswered.
        case truncateWithoutTCP
        /// NOERROR with the other family's record: an A query gets AAAA `::1`, an AAAA query gets
        /// A `127.0.0.10` (TTL 60).
        case wrongType
        /// The answer relayed from the upstream, with the QR bit clear (a query, not a response).
        case qrClear
        /// RCODE 15 (unassigned) and no records.
        case rcode15
        /// The TC bit and no records, over UDP and over TCP alike.
        case truncateOverTCP
        /// SERVFAIL for AAAA queries; every other query relayed as in ``answer``.
        case servfailAAAA
        /// The answer relayed, every A record of its answer section pointed at `127.0.0.66` and every
        /// other byte (the RRSIGs included) as relayed: a signed name's answer whose signature no longer
        /// matches.
        case forgeA

        /// The mode's name on the script's command line and in its log.
        public var name: String {
            switch self {
            case .answer: "answer"
            case .servfail: "servfail"
            case .refused: "refused"
            case .nxdomain: "nxdomain"
            case .drop: "drop"
            case .delay(let duration): "delay-\(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)"
            case .truncate: "truncate"
            case .truncateWithoutTCP: "truncate-notcp"
            case .wrongType: "wrong-type"
            case .qrClear: "qr-clear"
            case .rcode15: "rcode-15"
            case .truncateOverTCP: "tc-tcp"
            case .servfailAAAA: "servfail-aaaa"
            case .forgeA: "forge-a"
            }
        }
    }

    /// One query as the server logged it.
    public struct Query: Sendable, Hashable, CustomStringConvertible {
        /// `udp` or `tcp`.
        public let transport: String
        /// `A`, `AAAA`, …
        public let type: String
        /// The name asked, lower case, no trailing dot.
        public let name: String
        /// The mode the server applied.
        public let mode: String

        public init(transport: String, type: String, name: String, mode: String) {
            self.transport = transport
            self.type = type
            self.name = name
            self.mode = mode
        }

        public var description: String { "\(transport) \(type) \(name) \(mode)" }
    }

    /// Where clients send queries.
    public let address: Upstream
    private let server: ScriptServer
    private var directory: URL { server.directory }

    /// Starts the server in `mode`, relaying answers from `upstream`; returns once it reports `READY`.
    ///
    /// - Throws: ``ScriptServer/StartFailure`` when the script does not report `READY` within 30 seconds.
    public init(mode: Mode = .answer, upstream: Upstream?) async throws {
        server = try await ScriptServer(script: "fault-dns", hint: "; is dnslib installed (scripts/bootstrap)?") { directory in
            var arguments = ["--listen", "127.0.0.1:0", "--mode", mode.name,
                             "--control", directory.appendingPathComponent("mode").path,
                             "--log", directory.appendingPathComponent("queries.log").path]
            if let upstream { arguments += ["--upstream", upstream.description] }
            return arguments
        }
        guard let address = Upstream(server.readyAddress) else {
            server.stop()
            throw ScriptServer.StartFailure(description: "scripts/fault-dns reported no address: \(server.readyAddress)")
        }
        self.address = address
    }

    /// Changes the mode for the queries that follow.
    public func setMode(_ mode: Mode) throws {
        try Data((mode.name + "\n").utf8).write(to: directory.appendingPathComponent("mode"), options: .atomic)
    }

    /// Every query received so far, in arrival order.
    public var queries: [Query] {
        guard let text = try? String(contentsOf: directory.appendingPathComponent("queries.log"), encoding: .utf8)
        else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count == 4 else { return nil }
            return Query(transport: fields[0], type: fields[1], name: fields[2], mode: fields[3])
        }
    }

    /// Stops the server by its PID and removes its files. Idempotent.
    public func stop() { server.stop() }
}
