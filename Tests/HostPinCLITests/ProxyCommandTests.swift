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

    // MARK: Graceful stop

    /// SIGTERM while a large download runs: the idle keep-alive connection is closed at once, the
    /// download finishes whole, and the process exits 0 within the grace period.
    @Test func sigtermLetsADownloadInFlightFinishAndExitsZero() async throws {
        let proxy = try await RunningProxy(lab: lab, extra: ["--grace", "10"])
        let idle = try RawClient(proxy.address)
        let first = try await idle.roundTrip("GET \(whoami) HTTP/1.1\r\nHost: www.example.test\r\n\r\n", until: "origin=www")
        #expect(first.hasPrefix("HTTP/1.1 200 OK\r\n"))
        // 40 MB at 8 MB/s: about 5 s, far more than the socket buffers hold, so the proxy is relaying it
        // when the signal comes.
        let length = 40_000_000
        let file = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: file) }
        let download = Task {
            try await ProcessRunner.run("/usr/bin/curl", [
                "-sS", "-N", "--max-time", "60", "--limit-rate", "8M", "-x", "http://\(proxy.address)", "-o", file,
                "-w", "%{http_code} %{size_download}", "http://www.example.test:\(lab.httpPort)/bytes/\(length)",
            ])
        }
        try await Self.waitUntil(file, holds: 4_000_000)
        let signalled = ContinuousClock.now
        proxy.signal(SIGTERM)
        let idleClosed = try await idle.waitForClose()
        let result = try await download.value
        let downloaded = ContinuousClock.now - signalled
        let status = await proxy.exitStatus(within: .seconds(12))
        let exited = ContinuousClock.now - signalled
        print("SIGTERM: idle connection closed after \(idleClosed), download done after \(downloaded), exit after \(exited)")
        #expect(idleClosed < .seconds(1))
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput == "200 \(length)")
        #expect(status == 0, "\(proxy.standardError)")
        #expect(exited < .seconds(10))
        #expect(proxy.standardError.contains("stopping: waiting up to 10 s for requests and tunnels in flight"))
    }

    /// A transfer longer than the grace period is cut when it ends, and the process exits 0 then.
    @Test func sigtermCutsATransferLongerThanTheGrace() async throws {
        let proxy = try await RunningProxy(lab: lab, extra: ["--grace", "1"])
        // 100 bytes, one every 100 ms: about 10 s.
        let file = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: file) }
        let download = Task {
            try await ProcessRunner.run("/usr/bin/curl", ["-sS", "-N", "--max-time", "30", "-x", "http://\(proxy.address)",
                                                          "-o", file, "-w", "%{size_download}",
                                                          "http://www.example.test:\(lab.httpPort)/drip/100/100"])
        }
        try await Self.waitUntil(file, holds: 1)
        let signalled = ContinuousClock.now
        proxy.signal(SIGTERM)
        let status = await proxy.exitStatus(within: .seconds(10))
        let exited = ContinuousClock.now - signalled
        let result = try await download.value
        print("SIGTERM with --grace 1: a 10 s transfer cut, exit after \(exited)")
        #expect(status == 0, "\(proxy.standardError)")
        #expect(exited >= .milliseconds(950))
        #expect(exited < .seconds(4))
        #expect(result.status == 18)  // curl: partial file
        let received = Int(result.standardOutput) ?? -1
        #expect((1..<100).contains(received), "\(received) bytes received")
    }

    /// A second signal during the grace period cuts the transfers at once.
    @Test func secondSignalCutsAtOnce() async throws {
        let proxy = try await RunningProxy(lab: lab, extra: ["--grace", "30"])
        let file = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: file) }
        let download = Task {
            try await ProcessRunner.run("/usr/bin/curl", ["-sS", "-N", "--max-time", "30", "-x", "http://\(proxy.address)",
                                                          "-o", file, "http://www.example.test:\(lab.httpPort)/drip/100/100"])
        }
        try await Self.waitUntil(file, holds: 1)
        proxy.signal(SIGTERM)
        try await Task.sleep(for: .milliseconds(300))
        let signalled = ContinuousClock.now
        proxy.signal(SIGINT)
        let status = await proxy.exitStatus(within: .seconds(10))
        let exited = ContinuousClock.now - signalled
        #expect(status == 0, "\(proxy.standardError)")
        #expect(exited < .seconds(3))
        #expect(try await download.value.status == 18)
    }

    // MARK: Connection limit

    @Test func maxConnectionsAnswers503UntilAConnectionLeaves() async throws {
        let proxy = try await RunningProxy(lab: lab, extra: ["--max-connections", "1"])
        var idle: RawClient? = try RawClient(proxy.address)
        _ = try await idle?.roundTrip("GET \(whoami) HTTP/1.1\r\nHost: www.example.test\r\n\r\n", until: "origin=www")
        let refused = try await ProcessRunner.run("/usr/bin/curl", ["-sS", "--max-time", "5", "-x", "http://\(proxy.address)",
                                                                    "-w", "%{http_code}", whoami])
        #expect(refused.standardOutput == "The proxy is serving its maximum of 1 connections; try again later.\n503")
        idle = nil  // closes it
        let served = try await ProcessRunner.run("/usr/bin/curl", ["-sS", "--max-time", "5", "--retry", "3", "-x", "http://\(proxy.address)", whoami])
        #expect(served.standardOutput == "origin=www host=www.example.test:\(lab.httpPort)\n", "\(served.standardError)")
        #expect(proxy.standardError.contains("hostpin proxy: 1 connections open (the maximum): answering new ones 503 until one closes"))
        proxy.signal(SIGINT)
        #expect(await proxy.exitStatus(within: .seconds(10)) == 0)
    }

    @Test(arguments: [
        (["--max-connections", "0"], "hostpin: error: invalid value for '--max-connections': '0' is not a number from 1 to 1000000."),
        (["--max-connections", "ten"], "hostpin: error: invalid value for '--max-connections': 'ten' is not a number from 1 to 1000000."),
        (["--grace", "-1"], "hostpin: error: invalid value for '--grace': '-1' is not a number of seconds from 0 to 3600."),
        (["--grace", "nan"], "hostpin: error: invalid value for '--grace': 'nan' is not a number of seconds from 0 to 3600."),
    ])
    func badLimitOrGraceIsAUsageError(arguments: [String], message: String) async throws {
        let result = try await HostPinBinary.run(["proxy", "--server", "\(lab.trustedDNS)"] + arguments)
        #expect(result.status == 2)
        #expect(result.standardError.split(separator: "\n").first.map(String.init) == message)
    }

    // MARK: Rules

    /// Writes `rules` (the members of the `rules` array) to `rules.json` in a new temporary folder,
    /// returns its path; the caller removes the folder.
    private static func rulesFile(_ rules: String) throws -> String {
        let folder = temporaryPath()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data("{\"rules\": [\(rules)]}".utf8).write(to: URL(fileURLWithPath: folder + "/rules.json"))
        return folder + "/rules.json"
    }

    @Test func badRulesFileExitsTwoListingEveryProblem() async throws {
        let file = try Self.rulesFile("""
            {"action": "blok", "host": "ads.example.test"},
            {"action": "pin", "host": "api.example.test", "addresses": ["api"]}
            """)
        defer { try? FileManager.default.removeItem(atPath: (file as NSString).deletingLastPathComponent) }
        let result = try await HostPinBinary.run(["proxy", "--listen", "127.0.0.1:0", "--server", "\(lab.trustedDNS)",
                                                  "--rules", file])
        #expect(result.status == 2)
        #expect(result.standardOutput == "")
        #expect(result.standardError == "hostpin: error: invalid value for '--rules': \(file) has 2 errors: "
            + "rules[0].action: unknown action 'blok' (the actions are block, respond, redirect, pin, header and pass); "
            + "rules[1].addresses[0]: 'api' is not an IPv4 or IPv6 address.\nSee 'hostpin proxy --help'.\n")
    }

    /// `--rules` through the binary: a blocked host is answered 403, a pinned one reaches its address,
    /// and each access-log line ends with the rule and the address source.
    @Test func rulesApplyAndTheAccessLogNamesTheRule() async throws {
        let file = try Self.rulesFile("""
            {"action": "block", "host": "ads.example.test"},
            {"action": "pin", "host": "nx.example.test", "addresses": ["127.0.0.10"]}
            """)
        let log = Self.temporaryPath()
        defer {
            try? FileManager.default.removeItem(atPath: (file as NSString).deletingLastPathComponent)
            try? FileManager.default.removeItem(atPath: log)
        }
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let proxy = try await RunningProxy(lab: lab, extra: ["--rules", file],
                                           standardOutput: try FileHandle(forWritingTo: URL(fileURLWithPath: log)))
        let blocked = try await ProcessRunner.run("/usr/bin/curl", ["-sS", "-x", "http://\(proxy.address)", "-w", "%{http_code}",
                                                                    "http://ads.example.test:\(lab.httpPort)/banner.js"])
        #expect(blocked.standardOutput == "Blocked by rules[0] (block host ads.example.test).\n403")
        let pinned = try await ProcessRunner.run("/usr/bin/curl", ["-sS", "-x", "http://\(proxy.address)",
                                                                   "http://nx.example.test:\(lab.httpPort)/whoami"])
        #expect(pinned.standardOutput == "origin=www host=nx.example.test:\(lab.httpPort)\n")
        proxy.signal(SIGTERM)
        #expect(await proxy.exitStatus(within: .seconds(10)) == 0)
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines.first?.contains(" GET http://ads.example.test:\(lab.httpPort)/banner.js - 403 0 ") == true)
        #expect(lines.first?.hasSuffix(" rules[0] -") == true)
        #expect(lines.last?.contains(" 127.0.0.10:\(lab.httpPort) 200 ") == true)
        #expect(lines.last?.hasSuffix(" rules[1] pin") == true)
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

    /// A path in the temporary folder for a download.
    static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-proxy-cli-\(UUID().uuidString)").path
    }

    /// Waits until the file at `path` holds at least `count` bytes (the transfer is under way), at most 10 s.
    static func waitUntil(_ path: String, holds count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        func size() -> Int {
            var info = stat()
            return stat(path, &info) == 0 ? Int(info.st_size) : 0
        }
        while size() < count {
            guard ContinuousClock.now < deadline else { throw RunningProxy.Failure(description: "no download under way at \(path)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Runs blocking `work` on a thread of its own, never on the cooperative pool.
    static func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }
}

/// A blocking client connection whose reads give up after 10 s; closed when released.
private final class RawClient: Sendable {
    let descriptor: Int32

    /// Connects to `address` (`IP:PORT`, IPv4).
    init(_ address: String) throws {
        let parts = address.split(separator: ":")
        guard parts.count == 2, let port = UInt16(parts[1]) else { throw RunningProxy.Failure(description: "bad address \(address)") }
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var limit = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var target = sockaddr_in()
        target.sin_family = sa_family_t(AF_INET)
        target.sin_port = port.bigEndian
        target.sin_addr.s_addr = inet_addr(String(parts[0]))
        let status = withUnsafePointer(to: &target) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard status == 0 else {
            close(descriptor)
            throw RunningProxy.Failure(description: "connect to \(address) failed (errno \(errno))")
        }
    }

    deinit { close(descriptor) }

    /// Sends `text` and reads until what arrived contains `marker`.
    func roundTrip(_ text: String, until marker: String) async throws -> String {
        let descriptor = descriptor
        return try await ProxyCommandTests.offPool {
            let bytes = Array(text.utf8)
            guard send(descriptor, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else {
                throw RunningProxy.Failure(description: "send failed")
            }
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !String(decoding: received, as: UTF8.self).contains(marker) {
                let count = recv(descriptor, &buffer, buffer.count, 0)
                guard count > 0 else { throw RunningProxy.Failure(description: "closed before '\(marker)'") }
                received.append(contentsOf: buffer[..<count])
            }
            return String(decoding: received, as: UTF8.self)
        }
    }

    /// How long until the peer closes the connection (end of stream), at most 10 s.
    func waitForClose() async throws -> Duration {
        let descriptor = descriptor
        return try await ProxyCommandTests.offPool {
            let started = ContinuousClock.now
            var byte: UInt8 = 0
            guard recv(descriptor, &byte, 1, 0) == 0 else { throw RunningProxy.Failure(description: "not closed within 10 s") }
            return ContinuousClock.now - started
        }
    }
}
