import Foundation
import HostPinTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `contrib/hostpin.service`: systemd's own checks accept it, and it keeps the hardening README.md
/// promises. (systemd is not PID 1 here, so the unit is checked, not run.)
@Suite struct SystemdUnitTests {
    static let unit = Lab.repositoryRoot.appendingPathComponent("contrib/hostpin.service").path
    static let analyze = "/usr/bin/systemd-analyze"

    /// Runs `systemd-analyze arguments… UNIT` in a mount namespace whose /usr/local/bin (a tmpfs) holds
    /// the built hostpin, where the unit's ExecStart= looks for it.
    private static func analyze(_ arguments: String) async throws -> ProcessRunner.Result {
        try await ProcessRunner.run("/usr/bin/unshare", [
            "--mount", "sh", "-c",
            "mount -t tmpfs tmpfs /usr/local/bin && cp \"$0\" /usr/local/bin/hostpin && exec \(analyze) \(arguments) \"$1\"",
            try HostPinBinary.path(), unit,
        ])
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: analyze) && getuid() == 0,
                   "needs systemd-analyze (Debian's systemd package) and root (a mount namespace)"))
    func systemdAnalyzeVerifiesItWithoutAWord() async throws {
        let result = try await Self.analyze("verify")
        #expect(result.status == 0)
        #expect(result.standardOutput.isEmpty && result.standardError.isEmpty, "\(result.standardOutput)\(result.standardError)")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: analyze) && getuid() == 0,
                   "needs systemd-analyze (Debian's systemd package) and root (a mount namespace)"))
    func itsExposureIsLow() async throws {
        let result = try await Self.analyze("security --offline=true --no-pager")
        let line = try #require(result.standardOutput.split(separator: "\n").last { $0.contains("Overall exposure level") })
        let level = try #require(line.split(separator: " ").compactMap { Double($0) }.first)
        #expect(level <= 2.0, "\(line)")
    }

    @Test func itRunsServeWithTheHardeningREADMEPromises() throws {
        let text = try String(contentsOfFile: Self.unit, encoding: .utf8)
        let lines = Set(text.split(separator: "\n").map(String.init))
        for directive in ["ExecStart=/usr/local/bin/hostpin serve --config /etc/hostpin/config.json",
                          "ExecReload=/bin/kill -HUP $MAINPID", "Restart=on-failure", "DynamicUser=yes",
                          "StateDirectory=hostpin", "RuntimeDirectory=hostpin", "AmbientCapabilities=CAP_NET_BIND_SERVICE",
                          "CapabilityBoundingSet=CAP_NET_BIND_SERVICE", "NoNewPrivileges=yes", "ProtectSystem=strict",
                          "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX"] {
            #expect(lines.contains(directive), "contrib/hostpin.service has no \(directive)")
        }
        // No capability but the one for port 53.
        #expect(text.split(separator: "\n").filter { $0.hasPrefix("AmbientCapabilities=") }.count == 1)
    }
}
