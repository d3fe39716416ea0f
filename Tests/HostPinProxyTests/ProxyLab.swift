import Foundation
import HostPin
import HostPinProxy
import HostPinTestSupport
import Synchronization
import Testing

/// Access-log entries a test's proxy wrote.
final class AccessLogRecorder: Sendable {
    private let entries = Mutex<[AccessLogEntry]>([])

    func record(_ entry: AccessLogEntry) { entries.withLock { $0.append(entry) } }

    var all: [AccessLogEntry] { entries.withLock { $0 } }

    /// The entries once there are at least `count` (a tunnel's line is written when it closes, just
    /// after the client exits), waiting up to 5 s.
    func waitFor(_ count: Int) async -> [AccessLogEntry] {
        for _ in 0..<500 where all.count < count {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return all
    }
}

/// What a finished program left.
struct RunResult: Sendable {
    let status: Int32
    let standardOutput: String
    let standardError: String
}

/// A proxy per test on `127.0.0.1:0`, resolving through the lab's trusted NSD (never the hijacker), and
/// curl run through it.
enum ProxyLab {
    static let lab: Lab? = try? Lab.current()

    static let resolver: (any HostResolver)? = lab.flatMap { lab in
        (try? TrustedResolver(configuration: .lab([lab.trustedDNS]))).map { CachingResolver(upstream: $0) }
    }

    /// Starts a proxy configured by `configure` (by default: private targets allowed, as every lab
    /// address is loopback), resolving through `resolver` (by default the shared ``resolver``), runs
    /// `body`, stops the proxy.
    static func withProxy<Result>(
        _ configure: (inout ForwardProxy.Configuration) -> Void = { _ in },
        allowPrivate: Bool = true,
        resolver: (any HostResolver)? = nil,
        _ body: (_ proxy: SocketAddress, _ lab: Lab, _ log: AccessLogRecorder) async throws -> Result
    ) async throws -> Result {
        let (proxy, address, log) = try startProxy(configure, allowPrivate: allowPrivate, resolver: resolver)
        do {
            let result = try await body(address, try Lab.current(), log)
            await proxy.stop()
            return result
        } catch {
            await proxy.stop()
            throw error
        }
    }

    /// Starts a proxy on `127.0.0.1:0` configured like ``withProxy(_:allowPrivate:resolver:_:)``'s; the
    /// caller stops it.
    static func startProxy(_ configure: (inout ForwardProxy.Configuration) -> Void = { _ in }, allowPrivate: Bool = true,
                           resolver: (any HostResolver)? = nil)
        throws -> (proxy: ForwardProxy, address: SocketAddress, log: AccessLogRecorder)
    {
        _ = try Lab.current()
        guard let resolver = resolver ?? Self.resolver else { throw Lab.Problem.notRunning }
        let log = AccessLogRecorder()
        var configuration = ForwardProxy.Configuration()
        configuration.listenAddress = SocketAddress(address: .loopbackV4, port: 0)
        configuration.allowPrivate = allowPrivate
        configuration.accessLog = { log.record($0) }
        configure(&configuration)
        let proxy = ForwardProxy(configuration: configuration, resolver: resolver)
        return (proxy, try proxy.start(), log)
    }

    /// Runs `/usr/bin/curl -sS` with `arguments`.
    static func curl(_ arguments: [String]) async throws -> RunResult {
        try await run("/usr/bin/curl", ["-sS", "--max-time", "30"] + arguments)
    }

    /// `http://NAME:LAB_HTTP_PORT/PATH`.
    static func http(_ lab: Lab, _ host: String, _ path: String) -> String {
        "http://\(host):\(lab.httpPort)\(path)"
    }

    /// The SHA-256 of a file, by `sha256sum`.
    static func sha256(of path: String) async throws -> String {
        let result = try await run("/usr/bin/sha256sum", [path])
        return String(result.standardOutput.prefix(64))
    }

    /// A file of `count` random bytes in the temporary folder, written by `head -c N /dev/urandom` (off
    /// the cooperative pool: generating 10 MiB in a debug build would hold one of its two threads for
    /// seconds); deleted by the caller.
    static func randomFile(bytes count: Int) async throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-proxy-\(UUID().uuidString).bin").path
        _ = try await run("/bin/sh", ["-c", "head -c \(count) /dev/urandom > '\(path)'"])
        return path
    }

    /// Runs a program with its output in temporary files, on a thread of its own.
    ///
    /// Not `ProcessRunner`: it drains pipes on `DispatchQueue.global()`, and on Linux that root queue
    /// also runs Swift's cooperative pool, so a few curls blocked on the proxy occupy the threads the
    /// proxy's own tasks need, and everything waits for curl's timeout.
    static func run(_ executable: String, _ arguments: [String]) async throws -> RunResult {
        try await TestSockets.offPool {
            let folder = FileManager.default.temporaryDirectory
            let outURL = folder.appendingPathComponent("hostpin-proxy-out-\(UUID().uuidString)")
            let errURL = folder.appendingPathComponent("hostpin-proxy-err-\(UUID().uuidString)")
            _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
            _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
            defer {
                try? FileManager.default.removeItem(at: outURL)
                try? FileManager.default.removeItem(at: errURL)
            }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = try FileHandle(forWritingTo: outURL)
            process.standardError = try FileHandle(forWritingTo: errURL)
            try process.run()
            process.waitUntilExit()
            return RunResult(status: process.terminationStatus,
                                        standardOutput: try String(contentsOf: outURL, encoding: .utf8),
                                        standardError: try String(contentsOf: errURL, encoding: .utf8))
        }
    }
}
