import Foundation
import HostPin
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A redis-server (Debian's) owned by one test, on a free 127.0.0.1 port (or the port given, to restart
/// one where it was), keeping nothing on disk. It is signalled by its PID only: killed (SIGKILL), hung
/// (SIGSTOP: the port still accepts connections, nothing is answered) and resumed (SIGCONT).
///
/// It runs under a bash that waits for it, as ``DnsmasqServer`` does, and writes its PID file.
public final class RedisServer: Sendable {
    /// Why the server could not be started.
    public struct StartFailure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The TCP port it listens on (127.0.0.1).
    public let port: UInt16
    private let pid: Int32
    private let directory: String
    private let stopped = Mutex(false)

    /// `redis://127.0.0.1:PORT`, as `--shared-cache` takes it.
    public var url: String { "redis://127.0.0.1:\(port)" }

    /// Starts redis-server (with `requirePass` when given) and returns once it answers `PING`.
    ///
    /// - Throws: ``StartFailure`` when no port is free or it does not answer within 30 seconds.
    public init(port wanted: UInt16? = nil, requirePass: String? = nil) async throws {
        var template = Array("/tmp/hostpin-redis-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw StartFailure(description: "mkdtemp failed") }
        directory = String(cString: made)
        port = try wanted ?? AuthoritativeServer.freePort()
        let pidFile = directory + "/redis.pid"
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/bash")
        shell.arguments = ["-c", "/usr/bin/redis-server \"$@\" & wait", "redis-server",
                           "--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                           "--dir", directory, "--pidfile", pidFile, "--daemonize", "no", "--protected-mode", "no"]
            + (requirePass.map { ["--requirepass", $0] } ?? [])
        shell.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        _ = FileManager.default.createFile(atPath: directory + "/redis.log", contents: nil)
        shell.standardError = FileHandle(forWritingAtPath: directory + "/redis.log") ?? FileHandle.nullDevice
        shell.standardInput = FileHandle(forReadingAtPath: "/dev/null")
        try shell.run()
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(30)
        var pid: Int32?
        var answered = false
        while clock.now < deadline, shell.isRunning {
            if pid == nil, let text = try? String(contentsOfFile: pidFile, encoding: .utf8) {
                pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            if pid != nil,
               let ping = try? await ProcessRunner.run("/usr/bin/redis-cli", ["-p", "\(port)"]
                                                       + (requirePass.map { ["--no-auth-warning", "-a", $0] } ?? []) + ["PING"]),
               ping.standardOutput.hasPrefix("PONG") {
                answered = true
                break
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        guard let pid, answered else {
            if let pid { _ = Glibc.kill(pid, SIGKILL) }
            let log = (try? String(contentsOfFile: directory + "/redis.log", encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(atPath: directory)
            throw StartFailure(description: "redis-server on port \(port) did not start: \(log.isEmpty ? "no PONG within 30 s" : log)")
        }
        self.pid = pid
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Kills the server (SIGKILL to its PID): gone, its port closed. Idempotent.
    public func kill() {
        guard !stopped.withLock({ stopped in defer { stopped = true }; return stopped }) else { return }
        _ = Glibc.kill(pid, SIGCONT)
        _ = Glibc.kill(pid, SIGKILL)
    }

    /// Stops the server with SIGSTOP: hung, not gone.
    public func hang() {
        guard !stopped.withLock({ $0 }) else { return }
        _ = Glibc.kill(pid, SIGSTOP)
    }

    /// Resumes a hung server (SIGCONT).
    public func resume() {
        guard !stopped.withLock({ $0 }) else { return }
        _ = Glibc.kill(pid, SIGCONT)
    }

    /// Runs `redis-cli -p PORT ARGUMENTS…` and returns its standard output.
    public func cli(_ arguments: [String]) async throws -> String {
        try await ProcessRunner.run("/usr/bin/redis-cli", ["-p", "\(port)"] + arguments).standardOutput
    }
}
