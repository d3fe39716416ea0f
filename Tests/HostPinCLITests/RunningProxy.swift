import Foundation
import HostPinTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A `hostpin proxy --listen 127.0.0.1:0 --allow-private …` process: standard output where the test
/// says, standard error in a file. Killed (SIGKILL) when released still running.
final class RunningProxy: Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// `127.0.0.1:PORT`, from the `listening on` line.
    let address: String
    private let process: Process
    private let errorPath: String

    /// `hostpin proxy --listen 127.0.0.1:0 --server <the lab's trusted NSD> --allow-private extra…`.
    convenience init(lab: Lab, extra: [String] = [], standardOutput: FileHandle = FileHandle.nullDevice) async throws {
        try await self.init(["--server", "\(lab.trustedDNS)"] + extra, standardOutput: standardOutput)
    }

    /// `hostpin proxy --listen 127.0.0.1:0 --allow-private arguments…` (without `--allow-private` when
    /// `allowPrivate` is false); returns once it listens.
    init(_ arguments: [String], standardOutput: FileHandle = FileHandle.nullDevice, allowPrivate: Bool = true) async throws {
        errorPath = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-proxy-cli-\(UUID().uuidString)").path
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try HostPinBinary.path())
        process.arguments = ["proxy", "--listen", "127.0.0.1:0"] + (allowPrivate ? ["--allow-private"] : []) + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["HOSTPIN_UPSTREAMS": ""]) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = standardOutput
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        try process.run()
        self.process = process
        var found: String?
        for _ in 0..<500 {
            let text = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening on ") }) {
                found = String(line.dropFirst("listening on ".count))
                break
            }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        guard let found else {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            throw Failure(description: "hostpin proxy did not start: \((try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "")")
        }
        address = found
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(atPath: errorPath)
    }

    /// What the proxy wrote to standard error so far.
    var standardError: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }

    func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// The exit status once the process has exited normally, waiting up to `limit`; `nil` when it is
    /// still running then, or died of a signal.
    func exitStatus(within limit: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + limit
        while process.isRunning, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        guard !process.isRunning, process.terminationReason == .exit else { return nil }
        return process.terminationStatus
    }

    /// SIGTERM, then the exit status once it has exited normally (within 15 s); `nil` otherwise.
    func stop() async -> Int32? {
        signal(SIGTERM)
        return await exitStatus(within: .seconds(15))
    }
}
