import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Starts a daemon of the lab's kind (dnsmasq, redis-server) under a bash that waits for it, and waits
/// until it has written its PID file and answers: the daemon closes or keeps descriptors as it likes,
/// while Foundation's `Process` waits for the bash (see ``DnsmasqServer``). Standard error goes to
/// `DIRECTORY/NAME.err`.
enum BashDaemon {
    /// Why the daemon did not start: its standard error, or that it did not answer.
    struct Failure: Error {
        let reason: String
    }

    /// Runs `executable arguments…` and returns its PID once `ready` says it answers.
    ///
    /// - Returns: the PID, or the reason it did not start within 30 seconds (a loaded machine starts
    ///   processes slowly: seen over 10 s in the main test phase); what started is killed then.
    static func launch(_ executable: String, _ arguments: [String], name: String, directory: String, pidFile: String,
                       ready: () async -> Bool) async throws -> Result<Int32, Failure> {
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/bash")
        shell.arguments = ["-c", "\(executable) \"$@\" & wait", name] + arguments
        let errorFile = directory + "/\(name).err"
        _ = FileManager.default.createFile(atPath: errorFile, contents: nil)
        shell.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        shell.standardError = FileHandle(forWritingAtPath: errorFile) ?? FileHandle.nullDevice
        shell.standardInput = FileHandle(forReadingAtPath: "/dev/null")
        try shell.run()
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(30)
        var pid: Int32?
        while clock.now < deadline, shell.isRunning {
            if pid == nil, let text = try? String(contentsOfFile: pidFile, encoding: .utf8) {
                pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            if pid != nil, await ready() { return .success(pid!) }
            try await Task.sleep(for: .milliseconds(20))
        }
        if let pid { kill(pid, SIGKILL) }
        let log = (try? String(contentsOfFile: errorFile, encoding: .utf8)) ?? ""
        return .failure(Failure(reason: log.isEmpty ? "no answer within 30 s" : log))
    }
}
