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
/// It runs under a bash that waits for it (``BashDaemon``), as ``DnsmasqServer`` does, and writes its PID file.
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
        let port = port
        let launched = try await BashDaemon.launch(
            "/usr/bin/redis-server",
            ["--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", directory,
             "--pidfile", pidFile, "--daemonize", "no", "--protected-mode", "no"]
                + (requirePass.map { ["--requirepass", $0] } ?? []),
            name: "redis-server", directory: directory, pidFile: pidFile) {
            let ping = try? await ProcessRunner.run("/usr/bin/redis-cli", ["-p", "\(port)"]
                                                    + (requirePass.map { ["--no-auth-warning", "-a", $0] } ?? []) + ["PING"])
            return ping?.standardOutput.hasPrefix("PONG") == true
        }
        switch launched {
        case .success(let pid): self.pid = pid
        case .failure(let failure):
            try? FileManager.default.removeItem(atPath: directory)
            throw StartFailure(description: "redis-server on port \(port) did not start: \(failure.reason)")
        }
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
