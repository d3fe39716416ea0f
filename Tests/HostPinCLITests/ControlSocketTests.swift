import Foundation
import HostPinTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `--control-socket PATH` and `hostpin ctl`: each command against a running service, the socket's mode
/// and its refusal of other users, a stale socket file at start.
@Suite struct ControlSocketTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    /// A folder for a socket (mode 0755, so that another user can reach the socket inside), removed by
    /// the caller; and the socket's path in it.
    private static func socketFolder() throws -> (URL, String) {
        let folder = try ConfigFileTests.folder([:])
        chmod(folder.path, 0o755)
        return (folder, folder.appendingPathComponent("control").path)
    }

    private static func ctl(_ path: String, _ arguments: String...) async throws -> ProcessRunner.Result {
        try await HostPinBinary.run(["ctl", "--control-socket", path] + arguments)
    }

    @Test func eachCommandAgainstARunningServe() async throws {
        let upstream = try await FaultServer(upstream: lab.trustedDNS)
        let (folder, path) = try Self.socketFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let stub = try await ServeProcess(["--dns-listen", "127.0.0.1:0", "--server", "\(upstream.address)", "--dnssec", "off", "--control-socket", path])
        defer { stub.kill() }
        #expect(stub.standardError.contains("listening on \(path) (control)\n"))
        var status = stat()
        #expect(stat(path, &status) == 0 && status.st_mode == S_IFSOCK | 0o600)
        let dns = try #require(stub.dnsAddresses.first)
        #expect(try await ConfigFileTests.dig(dns, "+short", "www.example.test") == "127.0.0.10\n")
        #expect(try await ConfigFileTests.dig(dns, "+short", "www.example.test") == "127.0.0.10\n")

        let stats = try await Self.ctl(path, "stats")
        #expect(stats.status == 0, "\(stats.standardError)")
        let lines = stats.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.first == "cache: 1 entries; 1 hits, 0 negative hits, 1 misses, 0 served stale, 0 refreshes")
        #expect(lines.dropFirst().first == "listeners: DNS \(dns); proxy none")
        #expect(lines.dropFirst(2).prefix(2) == ["upstreams: 1", "reloads: 0"])
        let json = try await Self.ctl(path, "--json", "stats")
        #expect(json.standardOutput.hasPrefix(#"{"cache":{"entries":1,"hits":1,"misses":1,"negativeHits":0,"refreshes":0,"staleServed":0},"#))
        #expect(json.standardOutput.split(separator: "\n").count == 1)

        let upstreams = try await Self.ctl(path, "upstreams")
        #expect(upstreams.standardOutput == "\(upstream.address) healthy\n")
        #expect(try await Self.ctl(path, "--json", "upstreams").standardOutput
                == #"{"upstreams":[{"status":"healthy","upstream":"\#(upstream.address)"}]}"# + "\n")

        // A flush sends the next query to the upstream again; without it, the answer is cached.
        let asked = CacheTestQueries.count(upstream, "www.example.test")
        let flush = try await Self.ctl(path, "flush", "WWW.example.test.")
        #expect(flush.status == 0 && flush.standardOutput == "flushed www.example.test\n")
        #expect(try await ConfigFileTests.dig(dns, "+short", "www.example.test") == "127.0.0.10\n")
        #expect(CacheTestQueries.count(upstream, "www.example.test") == asked + 1)
        #expect(try await Self.ctl(path, "--json", "flush", "--all").standardOutput == #"{"entries":1,"flushed":"all"}"# + "\n")
        #expect(try await ConfigFileTests.dig(dns, "+short", "www.example.test") == "127.0.0.10\n")
        #expect(CacheTestQueries.count(upstream, "www.example.test") == asked + 2)

        // The socket file goes with the service.
        Glibc.kill(stub.pid, SIGTERM)
        #expect(try await stub.exitStatus() == 0)
        #expect(!FileManager.default.fileExists(atPath: path))
        let gone = try await Self.ctl(path, "stats")
        #expect(gone.status == 1)
        #expect(gone.standardError.contains("no control socket at \(path)"))
    }

    @Test func upstreamsShowsOneHeldDown() async throws {
        let (folder, path) = try Self.socketFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let stub = try await ServeProcess(["--dns-listen", "127.0.0.1:0", "--server", SilentUpstream.closedPort.description,
                                           "--server", lab.trustedDNS.description, "--control-socket", path])
        defer { stub.kill() }
        #expect(try await ConfigFileTests.dig(try #require(stub.dnsAddresses.first), "+short", "www.example.test") == "127.0.0.10\n")
        let lines = try await Self.ctl(path, "upstreams").standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines.first?.hasPrefix("\(SilentUpstream.closedPort) held down after 1 failure, ") == true, "\(lines)")
        #expect(lines.last == "\(lab.trustedDNS) healthy")
    }

    /// Split DNS: a route's upstreams follow the default ones, each naming its route; one that never
    /// answers is held down there while the default list stays healthy.
    @Test func upstreamsNameEachRoute() async throws {
        let (folder, path) = try Self.socketFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let internalDNS = try #require(lab.internalDNS, "the lab has no LAB_INTERNAL_DNS: restart it")
        let stub = try await ServeProcess(["--dns-listen", "127.0.0.1:0", "--server", lab.trustedDNS.description,
                                           "--route", "corp.test,10.in-addr.arpa=\(SilentUpstream.closedPort),\(internalDNS)",
                                           "--control-socket", path])
        defer { stub.kill() }
        #expect(try await ConfigFileTests.dig(try #require(stub.dnsAddresses.first), "+short", "www.corp.test") == "10.1.2.3\n")
        let lines = try await Self.ctl(path, "upstreams").standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines.first == "\(lab.trustedDNS) healthy")
        #expect(lines.dropFirst().first?.hasPrefix("\(SilentUpstream.closedPort) (route corp.test,10.in-addr.arpa) held down after 1 failure, ")
                == true, "\(lines)")
        #expect(lines.last == "\(internalDNS) (route corp.test,10.in-addr.arpa) healthy")
        let json = try await Self.ctl(path, "--json", "upstreams").standardOutput
        #expect(json.contains(#"{"route":"corp.test,10.in-addr.arpa","status":"healthy","upstream":"\#(internalDNS)"}"#), "\(json)")
    }

    @Test(.enabled(if: getuid() == 0, "needs root: runs hostpin ctl as nobody"))
    func anotherUserIsRefused() async throws {
        let (folder, path) = try Self.socketFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let stub = try await ServeProcess(["--dns-listen", "127.0.0.1:0", "--server", lab.trustedDNS.description, "--control-socket", path])
        defer { stub.kill() }
        let asNobody = ["--reuid=nobody", "--regid=nogroup", "--clear-groups", try HostPinBinary.path(), "ctl", "--control-socket", path, "stats"]
        // The file's mode keeps nobody out.
        let denied = try await ProcessRunner.run("/usr/bin/setpriv", asNobody)
        #expect(denied.status == 1)
        #expect(denied.standardError.contains("the control socket \(path) belongs to another user"), "\(denied.standardError)")
        // With the mode opened, the service still refuses: the kernel says who connected.
        chmod(path, 0o666)
        let refused = try await ProcessRunner.run("/usr/bin/setpriv", asNobody)
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("the service refused: user 65534 is neither the service's user (0) nor root"),
                "\(refused.standardError)")
        #expect(try await Self.ctl(path, "stats").status == 0)
    }

    @Test func aStaleSocketFileIsReplacedAndAnythingElseLeftAlone() async throws {
        let (folder, path) = try Self.socketFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // A socket file whose process is gone: bound, then closed without removing the file.
        let stale = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(stale, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        close(stale)
        #expect(FileManager.default.fileExists(atPath: path))
        let stub = try await ServeProcess(["--dns-listen", "127.0.0.1:0", "--server", lab.trustedDNS.description, "--control-socket", path])
        defer { stub.kill() }
        #expect(try await Self.ctl(path, "stats").status == 0)

        // A socket another service serves: refused, and that one keeps it.
        let second = try await HostPinBinary.run(["serve", "--dns-listen", "127.0.0.1:0", "--server", lab.trustedDNS.description,
                                                  "--control-socket", path])
        #expect(second.status == 1)
        #expect(second.standardError.contains("hostpin: another process serves the control socket \(path)"), "\(second.standardError)")
        #expect(try await Self.ctl(path, "stats").status == 0)

        // Not a socket: left alone.
        let file = folder.appendingPathComponent("file").path
        try "keep me".write(toFile: file, atomically: true, encoding: .utf8)
        let refused = try await HostPinBinary.run(["serve", "--dns-listen", "127.0.0.1:0", "--server", lab.trustedDNS.description,
                                                   "--control-socket", file])
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("\(file) exists and is not a socket; it is left alone"))
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "keep me")
        // ctl pointed at it says it is no socket (connect(2) says ECONNREFUSED, as for a stale socket file).
        let notASocket = try await Self.ctl(file, "stats")
        #expect(notASocket.status == 1)
        #expect(notASocket.standardError
                    == "hostpin: \(file) is not a socket: is hostpin serve (or proxy) running with --control-socket \(file)?\n")
    }

    @Test func aReloadMovesTheSocketAndCtlReadsTheConfiguration() async throws {
        let (folder, first) = try Self.socketFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let second = folder.appendingPathComponent("other").path
        let config = folder.appendingPathComponent("config.json")
        func write(_ socket: String) throws {
            try """
                {"upstreams": {"servers": ["\(lab.trustedDNS)"]}, "listeners": {"dns": ["127.0.0.1:0"], "control": "\(socket)"}}
                """.write(to: config, atomically: true, encoding: .utf8)
        }
        try write(first)
        let stub = try await ServeProcess(["--config", config.path])
        defer { stub.kill() }
        let viaConfig = try await HostPinBinary.run(["ctl", "--config", config.path, "stats"])
        #expect(viaConfig.status == 0, "\(viaConfig.standardError)")
        // --control-socket wins over the file's listeners.control.
        let flag = try await HostPinBinary.run(["ctl", "--config", config.path, "--control-socket", second, "stats"])
        #expect(flag.standardError.contains("no control socket at \(second)"))
        try write(second)
        #expect(try await stub.reload() == "hostpin: reloaded: 0 rules; control socket \(second)")
        #expect(!FileManager.default.fileExists(atPath: first))
        let moved = try await Self.ctl(second, "stats")
        #expect(moved.standardOutput.contains("reloads: 1\n"))
    }

    @Test(arguments: [
        ([String](), "missing argument COMMAND (flush, stats, upstreams or status)."),
        (["flush"], "missing argument NAME (or --all) for flush."),
        (["flush", "--all", "www.example.test"], "flush takes a NAME or --all, not both."),
        (["stats", "--all"], "--all applies to flush only."),
        (["restart"], "invalid value for 'COMMAND': 'restart' is not flush, stats, upstreams or status."),
        (["flush", "bad..name"], "'bad..name' is not a valid host name: it has an empty label (two dots in a row, or a leading dot)."),
        (["--control-socket", "run/control", "stats"],
         "invalid value for '--control-socket': 'run/control' is neither an absolute path nor a bare file name (placed in the runtime directory)."),
    ])
    func usageErrors(_ arguments: [String], _ message: String) async throws {
        let result = try await HostPinBinary.run(["ctl"] + arguments)
        #expect(result.status == 2)
        #expect(result.standardError.hasPrefix("hostpin: error: \(message)\n"), "\(result.standardError)")
    }

    @Test func theDefaultPathIsInTheRuntimeDirectory() async throws {
        let result = try await HostPinBinary.run(["ctl", "stats"], environment: ["RUNTIME_DIRECTORY": "/nonexistent/hostpin"])
        #expect(result.status == 1)
        #expect(result.standardError.contains("no control socket at /nonexistent/hostpin/control"))
    }
}

/// Queries a ``FaultServer`` logged for a name.
enum CacheTestQueries {
    static func count(_ server: FaultServer, _ name: String) -> Int {
        server.queries.filter { $0.name == name }.count
    }
}
