import Foundation
import Synchronization

/// One of the lab's scripted servers (`scripts/fault-dns`, `scripts/fault-doh`) run as a child process
/// for one test: it gets a private temporary directory for its files, reports `READY <address>` as the
/// first line of its standard output, and is stopped by its PID.
public final class ScriptServer: Sendable {
    /// Why the server could not be started.
    public struct StartFailure: Error, CustomStringConvertible {
        public let description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// The server's own temporary directory (logs, control files), removed by ``stop()``.
    public let directory: URL
    /// What followed `READY ` on the first line: the address the server listens on.
    public let readyAddress: String
    // The child process, terminated once by `stop()`.
    private let process: Mutex<Process?>

    /// Starts `scripts/SCRIPT` with the arguments `arguments(directory)` gives for its directory and
    /// returns once it reports `READY`. Waits by polling (never blocking a thread of the cooperative pool:
    /// tests run in parallel on it).
    ///
    /// - Throws: ``StartFailure`` (with `hint` appended) when the script does not report `READY` within
    ///   30 seconds — Python's start-up on a loaded 2-core machine takes seconds.
    public init(script: String, hint: String = "", arguments: (URL) -> [String]) async throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("hostpin-\(script)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let readyFile = directory.appendingPathComponent("ready")
        _ = FileManager.default.createFile(atPath: readyFile.path, contents: nil)
        let process = Process()
        process.executableURL = Lab.repositoryRoot.appendingPathComponent("scripts/\(script)")
        process.arguments = arguments(directory)
        process.standardOutput = try FileHandle(forWritingTo: readyFile)
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
        try process.run()
        self.process = Mutex(process)
        let deadline = ContinuousClock.now + .seconds(30)
        var line = ""
        while ContinuousClock.now < deadline {
            let text = (try? String(contentsOf: readyFile, encoding: .utf8)) ?? ""
            if let first = text.split(separator: "\n").first, text.contains("\n") {
                line = String(first)
                break
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        guard line.hasPrefix("READY ") else {
            process.terminate()
            try? FileManager.default.removeItem(at: directory)
            throw StartFailure(description: "scripts/\(script) did not start (\(line.isEmpty ? "no output" : line))\(hint)")
        }
        readyAddress = String(line.dropFirst(6))
    }

    deinit { stop() }

    /// Stops the server and waits until it is gone (its ports closed), polling.
    public func stopAndWait() async throws {
        guard let process = process.withLock({ $0 }) else { return }
        stop()
        while process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
    }

    /// Stops the server: SIGTERM to its PID (Foundation reaps it); removes its files. Idempotent.
    public func stop() {
        guard let process = process.withLock({ process -> Process? in
            defer { process = nil }
            return process
        }) else { return }
        if process.isRunning { process.terminate() }
        try? FileManager.default.removeItem(at: directory)
    }
}
