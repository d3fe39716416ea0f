import Foundation
import HostPinTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `hostpin serve --listen` runs the same proxy as `hostpin proxy`: its rules, access log, CONNECT
/// ports, connection limit and grace.
@Suite(.serialized) struct ServeProxyOptionsTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    @Test func theProxyOfServeAppliesTheRulesAndWritesTheAccessLog() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-serve-proxy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let rules = folder.appendingPathComponent("rules.json")
        try #"{"rules": [{"action": "block", "host": "www.example.test"}]}"#.write(to: rules, atomically: true, encoding: .utf8)
        let log = folder.appendingPathComponent("access.log").path
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let stub = try await ServeProcess(["--dns-listen", "127.0.0.1:0", "--listen", "127.0.0.1:0", "--server", lab.trustedDNS.description,
                                           "--rules", rules.path, "--allow-private", "--allow-connect-port", "\(lab.httpsPort)",
                                           "--max-connections", "8", "--grace", "1"],
                                          standardOutput: try FileHandle(forWritingTo: URL(fileURLWithPath: log)))
        defer { stub.kill() }
        let proxy = try #require(stub.proxyAddress)
        let blocked = try await ProcessRunner.run("/usr/bin/curl", ["-s", "--max-time", "10", "-o", "/dev/null", "-w", "%{http_code}",
                                                                     "-x", "http://\(proxy)", "http://www.example.test:\(lab.httpPort)/whoami"])
        #expect(blocked.standardOutput == "403")
        // CONNECT to the lab's HTTPS port, allowed by --allow-connect-port.
        let tunnel = try await ProcessRunner.run("/usr/bin/curl", ["-s", "--max-time", "10", "--cacert", lab.caFile, "-x", "http://\(proxy)",
                                                                    "https://cdn.example.test:\(lab.httpsPort)/whoami"])
        #expect(tunnel.standardOutput == "origin=cdn host=cdn.example.test:\(lab.httpsPort)\n", "\(tunnel.standardError)")
        var lines: [String] = []
        for _ in 0..<250 {
            lines = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
            if lines.count >= 2 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.first?.contains(" GET http://www.example.test:\(lab.httpPort)/whoami - 403 0 ") == true, "\(lines)")
        #expect(lines.first?.hasSuffix(" rules[0] -") == true, "\(lines)")
        #expect(lines.last?.contains(" CONNECT cdn.example.test:\(lab.httpsPort) 127.0.0.11:\(lab.httpsPort) 200 ") == true, "\(lines)")
        Glibc.kill(stub.pid, SIGTERM)
        #expect(try await stub.exitStatus() == 0)
    }

    @Test(arguments: [["--allow-connect-port", "8443"], ["--max-connections", "4"], ["--grace", "2"], ["--no-address-ranking"]])
    func proxyOptionsWithoutListenAreAUsageError(_ arguments: [String]) async throws {
        let result = try await HostPinBinary.run(["serve", "--dns-listen", "127.0.0.1:0", "--server", lab.trustedDNS.description] + arguments)
        #expect(result.status == 2)
        #expect(result.standardError == "hostpin: error: \(arguments[0]) applies to the proxy: add --listen IP:PORT to run it.\n"
                    + "See 'hostpin serve --help'.\n")
    }
}
