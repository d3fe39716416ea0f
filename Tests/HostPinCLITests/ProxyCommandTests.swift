import Foundation
import HostPinTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `hostpin proxy` as a user runs it: its access log on a pipe nobody reads, SIGTERM while transfers
/// are in flight, and its limit on connections. Runs in scripts/test's timed phase (it bounds how long
/// the process takes to exit).
@Suite struct ProxyCommandTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    private var whoami: String { "http://www.example.test:\(lab.httpPort)/whoami" }

    // MARK: Access log

    /// The access log must never make a connection wait: a slow (here: never read) standard output once
    /// blocked a thread of the cooperative pool per log line, and with both blocked the whole proxy.
    @Test func accessLogToAPipeNobodyReadsDoesNotStallTheProxy() async throws {
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        let (readEnd, writeEnd) = (ends[0], ends[1])
        defer { close(readEnd) }
        // The smallest pipe buffer (one page): 500 lines of ~300 bytes are 36 times what it holds.
        #expect(fcntl(readEnd, 1031 /* F_SETPIPE_SZ */, 4096) == 4096)
        let proxy = try await RunningProxy(lab: lab, standardOutput: FileHandle(fileDescriptor: writeEnd, closeOnDealloc: false))
        close(writeEnd)

        // 500 requests, one after another on one keep-alive connection; one that stalls for 5 s ends curl.
        let pad = String(repeating: "p", count: 200)
        let curl = try await ProcessRunner.run("/usr/bin/curl", [
            "-sS", "--fail-early", "--max-time", "5", "-x", "http://\(proxy.address)", "-w", "\\ncode=%{http_code}\\n",
            "\(whoami)?pad=\(pad)&n=[1-500]",
        ])
        let codes = curl.standardOutput.split(separator: "\n").filter { $0.hasPrefix("code=") }
        #expect(curl.status == 0, "curl: \(curl.standardError.prefix(500)); proxy: \(proxy.standardError.prefix(500))")
        #expect(codes.count == 500)
        #expect(codes.allSatisfy { $0 == "code=200" })

        // Now read the log: every request is there, or counted in a notice of dropped lines.
        let (lines, dropped) = try await Self.readAccessLog(readEnd, expecting: 500, marker: "/whoami?pad=\(pad)&n=")
        print("access log: \(lines.count) lines read, \(dropped) dropped")
        #expect(lines.count + dropped == 500)
        #expect(lines.allSatisfy { $0.contains(" 200 ") })
        proxy.signal(SIGTERM)
        let exit = await proxy.exitStatus(within: .seconds(10))
        #expect(exit == 0, "\(proxy.standardError)")
    }

    /// Reads `descriptor` until `expected` requests are accounted for (lines containing `marker`, plus
    /// the counts of `N access-log lines dropped` notices), or 10 s pass.
    private static func readAccessLog(_ descriptor: Int32, expecting expected: Int, marker: String) async throws
        -> (lines: [String], dropped: Int)
    {
        try await offPool {
            var text = ""
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let deadline = ContinuousClock.now + .seconds(10)
            func tally() -> (lines: [String], dropped: Int) {
                let all = text.split(separator: "\n").map(String.init)
                let dropped = all.compactMap { line -> Int? in
                    guard line.contains("access-log lines dropped") else { return nil }
                    return Int(line.split(separator: " ").first { Int($0) != nil } ?? "")
                }.reduce(0, +)
                return (all.filter { $0.contains(marker) }, dropped)
            }
            while ContinuousClock.now < deadline {
                let counted = tally()
                if counted.lines.count + counted.dropped >= expected { break }
                var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&ready, 1, 200) > 0 else { continue }
                let count = read(descriptor, &buffer, buffer.count)
                if count <= 0 { break }
                text += String(decoding: buffer[..<count], as: UTF8.self)
            }
            return tally()
        }
    }

    /// Runs blocking `work` on a thread of its own, never on the cooperative pool.
    static func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }
}

/// A `hostpin proxy --listen 127.0.0.1:0 --server <trusted> --allow-private …` process: standard output
/// where the test says, standard error in a file. Killed (SIGKILL) when released still running.
private final class RunningProxy: Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// `127.0.0.1:PORT`, from the `listening on` line.
    let address: String
    private let process: Process
    private let errorPath: String

    init(lab: Lab, extra: [String] = [], standardOutput: FileHandle = FileHandle.nullDevice) async throws {
        errorPath = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-proxy-cli-\(UUID().uuidString)").path
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try HostPinBinary.path())
        process.arguments = ["proxy", "--listen", "127.0.0.1:0", "--server", "\(lab.trustedDNS)", "--allow-private"] + extra
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
}
