import Foundation
import HostPin
import HostPinProxy
import HostPinTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A `hostpin proxy` process (the built binary, as a user runs it), for tests that measure the process
/// itself: its threads, memory, CPU time and descriptors. Access-log lines go to /dev/null; standard
/// error to a file, read by ``standardError``.
final class ProxyProcess: Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let pid: Int32
    /// Where the proxy listens (from its `listening on IP:PORT` line).
    let address: SocketAddress
    private let process: Process
    private let errorPath: String

    /// Starts `hostpin proxy --listen 127.0.0.1:0 --server <trusted> --allow-private extra…`, with at
    /// most `descriptors` open files when given (through `prlimit`, which execs the proxy: same PID).
    init(lab: Lab, extra: [String] = [], descriptors: Int? = nil) async throws {
        let binary = try Self.binary()
        let arguments = ["proxy", "--listen", "127.0.0.1:0", "--server", lab.trustedDNS.description, "--allow-private"] + extra
        errorPath = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-proxy-stderr-\(UUID().uuidString)").path
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        let process = Process()
        if let descriptors {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
            process.arguments = ["--nofile=\(descriptors):\(descriptors)", "--", binary] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = arguments
        }
        process.environment = ProcessInfo.processInfo.environment.merging(["HOSTPIN_UPSTREAMS": ""]) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        try process.run()
        self.process = process
        pid = process.processIdentifier
        var found: SocketAddress?
        for _ in 0..<500 {
            let text = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening on ") }) {
                found = SocketAddress(String(line.dropFirst("listening on ".count)))
                break
            }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        guard let found else {
            process.terminate()
            throw Failure(description: "hostpin proxy did not start: \((try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "")")
        }
        address = found
    }

    deinit {
        if process.isRunning { kill(pid, SIGKILL) }
        try? FileManager.default.removeItem(atPath: errorPath)
    }

    /// What the proxy wrote to standard error so far.
    var standardError: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }

    /// The `Threads:` and `VmRSS:` (bytes) lines of /proc/PID/status.
    func threadsAndResidentBytes() throws -> (threads: Int, residentBytes: Int) {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        func value(_ name: String) -> Int? {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name) }) else { return nil }
            return Int(line.dropFirst(name.count).split { $0 == " " || $0 == "\t" }.first ?? "")
        }
        guard let threads = value("Threads:"), let kibibytes = value("VmRSS:") else {
            throw Failure(description: "no Threads/VmRSS in /proc/\(pid)/status")
        }
        return (threads, kibibytes * 1024)
    }

    /// The CPU time (user + system) the process has used, from /proc/PID/stat.
    func cpuTime() throws -> Duration {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // Fields after the command name, which is in parentheses and may hold spaces.
        guard let close = stat.lastIndex(of: ")") else { throw Failure(description: "unreadable /proc/\(pid)/stat") }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after the name.
        guard fields.count > 13, let user = Int(fields[11]), let system = Int(fields[12]) else {
            throw Failure(description: "unreadable /proc/\(pid)/stat")
        }
        let ticks = sysconf(Int32(_SC_CLK_TCK))
        return .milliseconds((user + system) * 1000 / max(1, ticks))
    }

    /// Stops the proxy (SIGTERM) and waits for it to exit, off the cooperative pool.
    func stop() async throws {
        process.terminate()
        let process = process
        _ = try await TestSockets.offPool { process.waitUntilExit() }
    }

    private static func binary() throws -> String {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("hostpin").path
        let debug = Lab.repositoryRoot.appendingPathComponent(".build/debug/hostpin").path
        guard let found = [beside, debug].first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw Failure(description: "no built hostpin at \(beside) or \(debug): run `swift build` first")
        }
        return found
    }
}
