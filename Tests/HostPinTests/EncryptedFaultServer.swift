import Foundation
import HostPin
import HostPinTestSupport
import Synchronization

/// `scripts/fault-doh`, a DoH or DoT server in one misbehaving mode (or relaying to a real DNS server),
/// started for one test on a free 127.0.0.1 port with the test PKI's certificate and stopped by its PID.
final class EncryptedFaultServer: Sendable {
    enum TransportProtocol: String, Sendable {
        case doh, dot
    }

    struct StartFailure: Error, CustomStringConvertible {
        let description: String
    }

    let port: UInt16
    let transportProtocol: TransportProtocol
    private let directory: URL
    // The child process, terminated once by `stop()`.
    private let process: Mutex<Process?>

    /// Starts the server on `port` (0: a free one); returns once it reports `READY`, polling (never
    /// blocking a pool thread).
    init(_ transportProtocol: TransportProtocol, mode: String, upstream: Upstream?, pki: EncryptedTestPKI,
         listen: IPAddress = .loopbackV4, port: UInt16 = 0) async throws
    {
        self.transportProtocol = transportProtocol
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-fault-doh-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let readyFile = directory.appendingPathComponent("ready")
        _ = FileManager.default.createFile(atPath: readyFile.path, contents: nil)
        let process = Process()
        process.executableURL = Lab.repositoryRoot.appendingPathComponent("scripts/fault-doh")
        var arguments = ["--protocol", transportProtocol.rawValue, "--listen", "\(listen.uriHost):\(port)", "--mode", mode,
                         "--cert", pki.certificateFile, "--key", pki.keyFile,
                         "--log", directory.appendingPathComponent("events.log").path]
        if let upstream { arguments += ["--upstream", upstream.description] }
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: readyFile)
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
        try process.run()
        self.process = Mutex(process)
        let deadline = ContinuousClock.now + .seconds(30)  // Python start-up on a loaded 2-core machine
        var line = ""
        while ContinuousClock.now < deadline {
            let text = (try? String(contentsOf: readyFile, encoding: .utf8)) ?? ""
            if let first = text.split(separator: "\n").first, text.contains("\n") {
                line = String(first)
                break
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        guard line.hasPrefix("READY "), let port = line.split(separator: ":").last.flatMap({ UInt16($0) }) else {
            process.terminate()
            throw StartFailure(description: "scripts/fault-doh did not start (\(line.isEmpty ? "no output" : line))")
        }
        self.port = port
    }

    deinit { stop() }

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

    /// Stops the server and waits until it is gone (its port closed), polling.
    func stopAndWait() async throws {
        guard let process = process.withLock({ $0 }) else { return }
        stop()
        while process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
    }

    /// Stops the server: SIGTERM to its PID (Foundation reaps it); removes its files. Idempotent.
    func stop() {
        guard let process = process.withLock({ process -> Process? in
            defer { process = nil }
            return process
        }) else { return }
        if process.isRunning { process.terminate() }
        try? FileManager.default.removeItem(at: directory)
    }
}
