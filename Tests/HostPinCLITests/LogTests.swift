import Foundation
import HostPinTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `--log-level`, `--log-format json`, `--access-log FILE`, and no secret in any log (README.md, "Logs").
@Suite struct LogTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    /// Waits up to 10 seconds for `condition`.
    private static func eventually(_ what: String, _ condition: () async throws -> Bool) async throws {
        for _ in 0..<500 {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw ServeProcess.Failure(description: "not within 10 s: \(what)")
    }

    @Test func jsonFormatWritesEveryDiagnosticAsOneObjectPerLine() async throws {
        let stub = try await ServeProcess(["--dns-listen", "127.0.0.1:0", "--server", lab.trustedDNS.description,
                                           "--log-format", "json"])
        defer { stub.kill() }
        let dns = try #require(stub.dnsAddresses.first)
        #expect(try await ConfigFileTests.dig(dns, "+short", "www.example.test") == "127.0.0.10\n")
        Glibc.kill(stub.pid, SIGHUP)
        try await Self.eventually("a reload line") { stub.standardError.contains("hostpin: reloaded") }
        let lines = stub.standardError.split(separator: "\n")
        #expect(lines.count == 2, "\(stub.standardError)")
        var messages: [String] = []
        for line in lines {
            let object = try #require((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any], "\(line)")
            #expect(Set(object.keys) == ["level", "message", "time"], "\(line)")
            #expect(object["level"] as? String == "info")
            let time = try #require(object["time"] as? String)
            #expect(time.count == 24 && time.hasSuffix("Z"), "\(time)")  // 2026-12-01T10:40:00.123Z
            #expect(line.hasPrefix(#"{"level":"info","message":"#), "keys sorted: \(line)")
            messages.append(try #require(object["message"] as? String))
        }
        #expect(messages == ["listening on \(dns) (DNS over UDP and TCP)", "hostpin: reloaded: 0 rules"])
    }

    @Test func eachLevelLeavesOutWhatIsBelowIt() async throws {
        let (folder, socket) = try Self.socketFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("config.json")
        let good = #"{"upstreams": {"servers": ["\#(lab.trustedDNS)"]}, "listeners": {"dns": ["127.0.0.1:0"], "control": "\#(socket)"}"#
        try (good + "}").write(to: config, atomically: true, encoding: .utf8)
        // warning: no `listening on` (info); ctl says where the stub listens.
        let errorPath = folder.appendingPathComponent("stderr").path
        let process = try Self.start(["serve", "--config", config.path, "--log-level", "warning"], standardError: errorPath)
        defer { if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) } }
        try await Self.eventually("the control socket") { FileManager.default.fileExists(atPath: socket) }
        let stats = try await HostPinBinary.run(["ctl", "--control-socket", socket, "--json", "stats"])
        let reply = try #require((try? JSONSerialization.jsonObject(with: Data(stats.standardOutput.utf8))) as? [String: Any])
        let dns = try #require(((reply["listeners"] as? [String: Any])?["dns"] as? [String])?.first, "\(stats.standardOutput)")
        #expect(try await ConfigFileTests.dig(dns, "+short", "www.example.test") == "127.0.0.10\n")
        let standardError = { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }
        // A refused reload is a warning: written.
        try "{".write(to: config, atomically: true, encoding: .utf8)
        Glibc.kill(process.processIdentifier, SIGHUP)
        try await Self.eventually("the refused reload") { standardError().contains("hostpin: reload refused") }
        // A reload is info: not written, but done.
        try (good + #", "rules": [{"action": "block", "host": "www.example.test"}]}"#).write(to: config, atomically: true, encoding: .utf8)
        Glibc.kill(process.processIdentifier, SIGHUP)
        try await Self.eventually("the rule in force") {
            try await ConfigFileTests.dig(dns, "www.example.test").contains("status: NXDOMAIN")
        }
        let lines = standardError().split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("hostpin: reload refused, nothing changed: "), "\(standardError())")

        // debug: each control request besides; info (the default) leaves it out.
        let debug = try await ServeProcess(["--dns-listen", "127.0.0.1:0", "--server", lab.trustedDNS.description,
                                            "--control-socket", socket + "-debug", "--log-level", "debug"])
        defer { debug.kill() }
        #expect(try await HostPinBinary.run(["ctl", "--control-socket", socket + "-debug", "stats"]).status == 0)
        try await Self.eventually("the debug line") { debug.standardError.contains("control: stats\n") }
        let info = try await ServeProcess(["--dns-listen", "127.0.0.1:0", "--server", lab.trustedDNS.description,
                                           "--control-socket", socket + "-info"])
        defer { info.kill() }
        #expect(try await HostPinBinary.run(["ctl", "--control-socket", socket + "-info", "stats"]).status == 0)
        #expect(!info.standardError.contains("control:"))
    }

    @Test func aBadLevelOrFormatIsAUsageError() async throws {
        let level = try await HostPinBinary.run(["serve", "--server", lab.trustedDNS.description, "--log-level", "loud"])
        #expect(level.status == 2)
        #expect(level.standardError.contains("invalid value for '--log-level': 'loud' is not one of error, warning, info, debug"),
                "\(level.standardError)")
        let format = try await HostPinBinary.run(["proxy", "--server", lab.trustedDNS.description, "--log-format", "xml"])
        #expect(format.status == 2)
        #expect(format.standardError.contains("invalid value for '--log-format': 'xml' is not one of text, json"),
                "\(format.standardError)")
        let file = try await HostPinBinary.run(["proxy", "--server", lab.trustedDNS.description, "--access-log", "/proc/sys/x.log"])
        #expect(file.status == 2)
        #expect(file.standardError.contains("/proc/sys/x.log"), "\(file.standardError)")
    }

    @Test func anAccessLogFileTakesTheLinesOffStandardOutput() async throws {
        let folder = try ConfigFileTests.folder([:])
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = folder.appendingPathComponent("access.log").path
        let outputPath = folder.appendingPathComponent("stdout").path
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        let stub = try await ServeProcess(["--dns-listen", "127.0.0.1:0", "--listen", "127.0.0.1:0", "--server",
                                           lab.trustedDNS.description, "--allow-private", "--access-log", log],
                                          standardOutput: output)
        defer { stub.kill() }
        let proxy = try #require(stub.proxyAddress)
        #expect(try await ReloadTests.fetch(through: proxy, "http://www.example.test:\(lab.httpPort)/whoami")
                == "200 origin=www host=www.example.test:\(lab.httpPort)\n")
        try await Self.eventually("the access log line") {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains(" GET http://www.example.test:\(lab.httpPort)/whoami ")
        }
        var status = stat()
        #expect(stat(log, &status) == 0 && status.st_mode & 0o007 == 0)  // 0640 less the umask: no one else reads it
        #expect(try String(contentsOfFile: outputPath, encoding: .utf8).isEmpty)
    }

    /// Authorization, Proxy-Authorization, Cookie and a target's user information, sent through the
    /// proxy of a stub at `--log-level debug`: none of them in standard output, standard error or the
    /// access log, in either format.
    @Test(arguments: ["text", "json"])
    func noSecretInAnyLog(_ format: String) async throws {
        let folder = try ConfigFileTests.folder([:])
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = folder.appendingPathComponent("access.log").path
        let outputPath = folder.appendingPathComponent("stdout").path
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        // The text run keeps the access log on standard output; the JSON run writes it to a file.
        let stub = try await ServeProcess(["--dns-listen", "127.0.0.1:0", "--listen", "127.0.0.1:0", "--server",
                                           lab.trustedDNS.description, "--allow-private", "--allow-connect-port",
                                           "\(lab.httpsPort)", "--log-level", "debug", "--log-format", format]
                                          + (format == "json" ? ["--access-log", log] : []),
                                          standardOutput: output)
        defer { stub.kill() }
        let proxy = try #require(stub.proxyAddress)
        let (host, port) = try #require(ServeProcess.split(proxy))
        let origin = "www.example.test:\(lab.httpPort)"
        _ = try await ProcessRunner.run("/usr/bin/curl", [
            "-s", "--max-time", "10", "-x", "http://\(proxy)", "--proxy-user", "user:SECRET-PROXY-AUTH",
            "-H", "Authorization: Bearer SECRET-AUTHORIZATION", "-H", "Cookie: session=SECRET-COOKIE",
            "http://\(origin)/whoami",
        ])
        _ = try await ProcessRunner.run("/usr/bin/curl", [
            "-s", "--max-time", "10", "-p", "-x", "http://\(proxy)", "--proxy-user", "user:SECRET-TUNNEL-AUTH",
            "--cacert", lab.caFile, "-H", "Cookie: s=SECRET-TUNNEL-COOKIE", "https://www.example.test:\(lab.httpsPort)/whoami",
        ])
        // A request-target with user information, as curl never sends one: refused (400), its head not logged.
        let raw = "GET http://user:SECRET-USERINFO@\(origin)/whoami HTTP/1.1\\r\\nHost: \(origin)\\r\\n"
            + "Authorization: Basic U0VDUkVULVJBVw==\\r\\nConnection: close\\r\\n\\r\\n"
        _ = try await ProcessRunner.run("/bin/bash", ["-c", "exec 3<>/dev/tcp/\(host)/\(port); printf '\(raw)' >&3; timeout 10 cat <&3"])
        let accessLog = { format == "json" ? (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                                           : (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }
        try await Self.eventually("three access log lines") { accessLog().split(separator: "\n").count >= 3 }
        let everything = accessLog() + ((try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "") + stub.standardError
        let basic = ["user:SECRET-PROXY-AUTH", "user:SECRET-TUNNEL-AUTH"].map { Data($0.utf8).base64EncodedString() }
        for secret in ["SECRET", "U0VDUkVULVJBVw=="] + basic {  // the markers, raw and in Basic's base64
            #expect(!everything.contains(secret), "\(secret) in a log:\n\(everything)")
        }
        #expect(accessLog().contains(" - - - 400 0 "), "\(accessLog())")
        #expect(accessLog().contains(" GET http://\(origin)/whoami "), "\(accessLog())")
        #expect(accessLog().contains(" CONNECT www.example.test:\(lab.httpsPort) "), "\(accessLog())")
    }

    // MARK: Helpers

    /// A folder reachable by path (mode 0755) and a control socket's path in it; removed by the caller.
    private static func socketFolder() throws -> (URL, String) {
        let folder = try ConfigFileTests.folder([:])
        chmod(folder.path, 0o755)
        return (folder, folder.appendingPathComponent("control").path)
    }

    /// Starts `hostpin arguments…`, its standard error in the file at `standardError`.
    private static func start(_ arguments: [String], standardError: String) throws -> Process {
        _ = FileManager.default.createFile(atPath: standardError, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try HostPinBinary.path())
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["HOSTPIN_UPSTREAMS": ""]) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: standardError))
        try process.run()
        return process
    }
}
