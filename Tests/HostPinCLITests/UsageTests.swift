import Foundation
import HostPinTestSupport
import Testing

/// Help, version and usage errors: exit 2, one sentence on standard error, a pointer to the help.
@Suite struct UsageTests {
    /// An upstream nothing answers on: passed so that no test can reach the public defaults even if
    /// parsing unexpectedly succeeds.
    private let unused = SilentUpstream.closedPort
    /// The public default set as the help lists it (never contacted by a test).
    static let defaultUpstreams = "https://cloudflare-dns.com/dns-query, https://dns.google/dns-query, https://dns.quad9.net/dns-query"

    @Test func toolHelpListsSubcommandsDefaultsAndExitCodes() async throws {
        let result = try await HostPinBinary.run(["--help"])
        #expect(result.status == 0)
        #expect(result.standardError == "")
        #expect(result.standardOutput.contains("USAGE: hostpin <subcommand> [options]"))
        #expect(result.standardOutput.contains("  lookup "))
        #expect(result.standardOutput.contains("  compare "))
        #expect(result.standardOutput.contains("  fetch "))
        #expect(result.standardOutput.contains(" 60  fetch: "))
        #expect(result.standardOutput.contains(Self.defaultUpstreams))
        #expect(result.standardOutput.contains("HOSTPIN_UPSTREAMS"))
        #expect(result.standardOutput.contains("  4  compare: the local resolver's answer contradicts"))
        #expect(try await HostPinBinary.run(["-h"]).standardOutput == result.standardOutput)
        #expect(try await HostPinBinary.run(["help"]).standardOutput == result.standardOutput)
    }

    @Test(arguments: ["lookup", "compare"])
    func subcommandHelpIsTheSameEveryWay(_ name: String) async throws {
        let result = try await HostPinBinary.run([name, "--help"])
        #expect(result.status == 0)
        #expect(result.standardOutput.contains("USAGE: hostpin \(name) NAME"))
        #expect(result.standardOutput.contains("--server IP:PORT|URL"))
        #expect(result.standardOutput.contains("--bootstrap NAME=IP[,IP...]"))
        #expect(result.standardOutput.contains("--pin NAME=sha256//BASE64"))
        #expect(result.standardOutput.contains("--ca-file FILE"))
        #expect(result.standardOutput.contains("--family 4|6|any"))
        #expect(result.standardOutput.contains("--timeout SECONDS"))
        #expect(result.standardOutput.contains(Self.defaultUpstreams))
        #expect(result.standardOutput.contains("cloudflare-dns.com=1.1.1.1,1.0.0.1,"))
        #expect(result.standardOutput.contains("EXIT STATUS:\n  0  "))
        #expect(try await HostPinBinary.run([name, "-h"]).standardOutput == result.standardOutput)
        #expect(try await HostPinBinary.run(["help", name]).standardOutput == result.standardOutput)
        #expect(try await HostPinBinary.run([name, "www.example.test", "--bogus", "--help"]).standardOutput
                    == result.standardOutput)
    }

    /// `hostpin 0.1.0` first (the User-Agent and scripts read it), then the commit built from (this
    /// checkout: a commit id, perhaps with uncommitted changes) and the C libraries' versions as they
    /// report themselves, which are the installed packages' (pkg-config reads the same packages' .pc files).
    @Test func versionPrintsTheVersionCommitAndLibraries() async throws {
        let result = try await HostPinBinary.run(["--version"])
        #expect(result.status == 0)
        #expect(result.standardError == "")
        let lines = result.standardOutput.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        try #require(lines.count == 6)
        #expect(lines[0] == "hostpin 0.1.0")
        #expect(lines[1].wholeMatch(of: /commit [0-9a-f]{40}( \+ uncommitted changes)?/) != nil, "\(lines[1])")
        func packageVersion(_ module: String) throws -> String {
            try ProcessRunner.run("/usr/bin/pkg-config", ["--modversion", module]).standardOutput
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(lines[2] == "c-ares \(try packageVersion("libcares"))")
        #expect(lines[3] == "ldns \(try packageVersion("ldns"))")
        #expect(lines[4] == "libcurl \(try packageVersion("libcurl"))")
        #expect(lines[5] == "")
    }

    @Test(arguments: [
        ("bad..name", "'bad..name' is not a valid host name: it has an empty label (two dots in a row, or a leading dot)."),
        (String(repeating: "a", count: 64) + ".example.test",
         "'\(String(repeating: "a", count: 64)).example.test' is not a valid host name: label '\(String(repeating: "a", count: 64))' is longer than 63 octets."),
        ("bad name.example.test",
         "'bad name.example.test' is not a valid host name: it contains U+0020, which is not allowed in a host name."),
    ])
    func invalidHostNameIsAUsageErrorWithTheReason(_ name: String, _ message: String) async throws {
        let result = try await HostPinBinary.run(["lookup", "www.example.test", name, "--server", unused])
        #expect(result.status == 2)
        #expect(result.standardOutput == "")
        #expect(result.standardError == "hostpin: error: \(message)\nSee 'hostpin lookup --help'.\n")
    }

    @Test(arguments: [
        (["lookup", "www.example.test", "--server", "1.2.3"],
         "invalid value for '--server': '1.2.3' is not an upstream (expected IP or IP:PORT, IPv6 as [IP]:PORT, "
            + "https://NAME[:PORT]/PATH for DNS over HTTPS or tls://NAME[:PORT] for DNS over TLS)."),
        (["lookup", "www.example.test", "--server=127.0.0.1:99999"],
         "invalid value for '--server': '127.0.0.1:99999' has no valid port (1-65535)."),
        (["lookup", "www.example.test", "--server", "127.0.0.1:1", "--bogus"], "unknown option '--bogus'."),
        (["lookup", "www.example.test", "--server", "127.0.0.1:1", "--bogus=3"], "unknown option '--bogus'."),
        (["lookup", "--server", "127.0.0.1:1"], "missing argument NAME (give at least one host name, or --batch FILE)."),
        (["lookup", "www.example.test", "--server", "127.0.0.1:1", "--family", "5"],
         "invalid value for '--family': '5' is not 4, 6 or any."),
        (["lookup", "www.example.test", "--server", "127.0.0.1:1", "--timeout", "0"],
         "invalid value for '--timeout': '0' is not a number of seconds from 0.001 to 3600."),
        (["lookup", "www.example.test", "--server", "127.0.0.1:1", "--timeout"], "option '--timeout' needs a value."),
        (["lookup", "www.example.test", "--server", "127.0.0.1:1", "--json=yes"], "flag '--json' takes no value."),
        (["compare", "www.example.test", "--server", "127.0.0.1:1", "--local", "nowhere"],
         "invalid value for '--local': 'nowhere' is not an IP address (expected IP or IP:PORT, IPv6 as [IP]:PORT)."),
        (["compare", "--server", "127.0.0.1:1"], "missing argument NAME (give the host name to compare, or --batch FILE)."),
    ])
    func badCommandLineIsAUsageError(_ arguments: [String], _ message: String) async throws {
        let result = try await HostPinBinary.run(arguments)
        #expect(result.status == 2)
        #expect(result.standardOutput == "")
        #expect(result.standardError == "hostpin: error: \(message)\nSee 'hostpin \(arguments[0]) --help'.\n")
    }

    @Test(arguments: [
        ([String](), "no subcommand was given."),
        (["resolve", "www.example.test"], "unknown subcommand 'resolve'; the subcommands are lookup, compare, fetch, proxy, serve, ctl, check-config and help."),
        (["--verbose"], "unknown option '--verbose'."),
        (["help", "resolve"], "unknown subcommand 'resolve'; the subcommands are lookup, compare, fetch, proxy, serve, ctl, check-config and help."),
    ])
    func badSubcommandIsAUsageError(_ arguments: [String], _ message: String) async throws {
        let result = try await HostPinBinary.run(arguments)
        #expect(result.status == 2)
        #expect(result.standardError == "hostpin: error: \(message)\nSee 'hostpin --help'.\n")
    }

    @Test func equalsFormAndDoubleDashAreAccepted() async throws {
        let lab = try Lab.current()
        let result = try await HostPinBinary.run(["lookup", "--server=\(lab.trustedDNS)", "--family=4", "--timeout=1.5",
                                            "--", "www.example.test"])
        #expect(result.status == 0)
        #expect(result.standardOutput == "www.example.test. 3600 IN A 127.0.0.10\n; secure\n")
    }

    @Test func optionAfterDoubleDashIsAName() async throws {
        // Validated as a host name, not rejected as an unknown option: `--` ended the options.
        let result = try await HostPinBinary.run(["lookup", "--server", unused, "--", "--bad..name"])
        #expect(result.status == 2)
        #expect(result.standardError.hasPrefix("hostpin: error: '--bad..name' is not a valid host name: "))
    }
}
