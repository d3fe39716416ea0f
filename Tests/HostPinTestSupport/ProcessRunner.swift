import Foundation
import Synchronization

/// Runs a program to completion and collects its exit status and output. Both pipes are drained while
/// the child runs, so a chatty child cannot stall on a full pipe.
public enum ProcessRunner {
    /// What a finished program left.
    public struct Result: Sendable {
        public let status: Int32
        public let standardOutput: String
        public let standardError: String
    }

    /// Runs `executable` with `arguments`; `environment` entries are added to (or override) this
    /// process's environment; `input` is written to its standard input.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                           input: String? = nil) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        let error = Pipe()
        let stdin = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        let group = DispatchGroup()
        let collected = Collected()
        for (pipe, isError) in [(output, false), (error, true)] {
            group.enter()
            // Threads of their own: on Linux DispatchQueue.global() is also where Swift's pool runs, and
            // readers blocked there starve the tasks of an in-process server the child talks to.
            Thread {
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                collected.set(String(decoding: data, as: UTF8.self), isError: isError)
                group.leave()
            }.start()
        }
        group.wait()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, standardOutput: collected.output,
                      standardError: collected.error)
    }
}

/// Output gathered from two reader threads.
private final class Collected: Sendable {
    private let texts = Mutex<(output: String, error: String)>(("", ""))

    func set(_ text: String, isError: Bool) {
        texts.withLock { if isError { $0.error = text } else { $0.output = text } }
    }

    var output: String { texts.withLock { $0.output } }
    var error: String { texts.withLock { $0.error } }
}
