import Foundation
import HostPin
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A dnsmasq owned by one test, on a free 127.0.0.1 port (UDP and TCP), answering from the rules it is
/// given only (`--address=/example.test/10.0.0.1` answers every name under example.test with 10.0.0.1,
/// `--address=/example.test/` says NXDOMAIN for them; the most specific rule wins). It never forwards
/// anywhere (`--no-resolv --no-hosts`, no `--server`): a name no rule covers is REFUSED.
///
/// dnsmasq runs under a bash that waits for it: dnsmasq closes the descriptors it inherits, which
/// Foundation's `Process` takes for its exit and then blocks in `waitpid`, stalling every other child's
/// exit. It is stopped by the PID it writes, with SIGKILL (children inherit the test process's blocked
/// SIGTERM); bash then exits.
public final class DnsmasqServer: Sendable {
    /// Why the server could not be started.
    public struct StartFailure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Where clients send queries.
    public let address: Upstream
    private let pid: Int32
    private let directory: String
    // Set once `stop()` has sent SIGKILL, so the PID (maybe reused by then) is never signalled twice.
    private let stopped = Mutex(false)

    /// Starts dnsmasq with `rules` (dnsmasq options such as `--address=/www.example.test/10.0.0.1`);
    /// returns once it answers queries (any answer: REFUSED for a name no rule covers).
    ///
    /// - Throws: ``StartFailure`` when no port is free or dnsmasq does not answer within 30 seconds (a
    ///   loaded machine starts processes slowly: seen over 10 s in the main test phase).
    public init(_ rules: [String]) async throws {
        var template = Array("/tmp/hostpin-dnsmasq-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw StartFailure(description: "mkdtemp failed") }
        directory = String(cString: made)
        let port = try AuthoritativeServer.freePort()
        address = Upstream(address: .loopbackV4, port: port)
        let pidFile = directory + "/dnsmasq.pid"
        let address = address
        let launched = try await BashDaemon.launch(
            "/usr/sbin/dnsmasq",
            ["--keep-in-foreground", "--conf-file=/dev/null", "--no-resolv", "--no-hosts", "--bind-interfaces",
             "--listen-address=127.0.0.1", "--port=\(port)", "--user=root", "--pid-file=\(pidFile)"] + rules,
            name: "dnsmasq", directory: directory, pidFile: pidFile) { await Self.answers(address) }
        switch launched {
        case .success(let pid): self.pid = pid
        case .failure(let failure):
            try? FileManager.default.removeItem(atPath: directory)
            throw StartFailure(description: "dnsmasq on \(address) did not start: \(failure.reason)")
        }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Stops dnsmasq (SIGKILL to its PID). Idempotent.
    public func stop() {
        guard !stopped.withLock({ stopped in defer { stopped = true }; return stopped }) else { return }
        kill(pid, SIGKILL)
    }

    /// Whether a server answers at `address` at all: an address, NXDOMAIN, NODATA, REFUSED or SERVFAIL
    /// all say it is up; a timeout or a closed port that it is not (yet).
    private static func answers(_ address: Upstream) async -> Bool {
        guard let resolver = try? UntrustedResolver(server: address, timeout: .milliseconds(100), tries: 1) else {
            return false
        }
        do throws(ResolutionError) {
            _ = try await resolver.resolve(HostName.parse("ready.example.test"), family: .v4)
            return true
        } catch {
            guard case .upstreamsFailed(let failures) = error else { return true }
            return failures.allSatisfy { $0.reason != .timeout && $0.reason != .unreachable }
        }
    }
}
