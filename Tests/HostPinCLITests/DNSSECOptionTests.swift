import Foundation
import HostPinTestSupport
import Testing

/// `--dnssec`, `--trust-anchor` (and `HOSTPIN_TRUST_ANCHOR`), `--insecure-domain` on every command that
/// takes `--server`: each bad input a usage error (2) naming the file, the line or the value, found
/// before any query; flags win over the environment. Upstreams here are the lab's plain NSD with
/// `--dnssec off` or the default (off): these tests check parsing, not validation.
@Suite struct DNSSECOptionTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    /// A temporary folder holding `files` (name → contents); removed by the caller.
    private static func folder(_ files: [String: String]) throws -> URL {
        try ConfigFileTests.folder(files)
    }

    /// A valid anchor file: the lab's, else a copy of the IANA root's DS lines.
    private static let rootDS = """
        ; the IANA root's key-signing keys, as Debian's dns-root-data root.ds writes them
        . IN DS 20326 8 2 E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC8D
        . IN DS 38696 8 2 683D2D0ACB8C9B712A1948B27F741219298D0A450D612C483AF444A4C0FB2B16

        """

    /// The one error line of a usage error, without the `hostpin: error: ` prefix.
    private static func errorLine(_ result: ProcessRunner.Result) -> String {
        let line = result.standardError.split(separator: "\n").first.map(String.init) ?? ""
        return line.hasPrefix("hostpin: error: ") ? String(line.dropFirst("hostpin: error: ".count)) : line
    }

    // MARK: --dnssec

    /// Every command that takes `--server` takes `--dnssec`, and refuses a value it does not know before
    /// anything starts.
    @Test(arguments: [
        ["lookup", "www.example.test"], ["compare", "www.example.test"], ["fetch", "http://www.example.test/"],
        ["proxy", "--listen", "127.0.0.1:0"], ["serve", "--dns-listen", "127.0.0.1:0"],
    ])
    func badModeIsAUsageErrorOnEveryCommand(_ command: [String]) async throws {
        let result = try await HostPinBinary.run(command + ["--server", "\(lab.trustedDNS)", "--dnssec", "strict"])
        #expect(result.status == 2, "\(result.standardError)")
        #expect(Self.errorLine(result) == "invalid value for '--dnssec': 'strict' is not validate, report or off.")
        #expect(result.standardOutput.isEmpty)
    }

    @Test func modeWithoutAValueIsAUsageError() async throws {
        let result = try await HostPinBinary.run(["lookup", "www.example.test", "--server", "\(lab.trustedDNS)", "--dnssec"])
        #expect(result.status == 2)
        #expect(Self.errorLine(result) == "option '--dnssec' needs a value.")
    }

    /// `--dnssec off` is today's behaviour: the records, and no DNSSEC line after them.
    @Test func offPrintsTheRecordsWithoutADNSSECLine() async throws {
        let result = try await HostPinBinary.run(["lookup", "www.example.test", "--server", "\(lab.trustedDNS)", "--dnssec", "off"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput == "www.example.test. 3600 IN A 127.0.0.10\n")
    }

    // MARK: --trust-anchor

    /// Each file that cannot be used, with what the sentence says after its path.
    @Test(arguments: [
        ("empty", "", ": it is empty"),
        ("blank", "\n  \n; only a comment\n", ": it is empty"),
        ("soa-only", ". IN SOA a. b. 1 2 3 4 5\n", ": it holds no DS or DNSKEY record"),
        ("bad-line", ". IN DS 20326 8 2 E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC8D\n\nnot a record at all\n",
         ", line 3: not a DS or DNSKEY record: not a record at all"),
        ("chaos", ". CH DS 20326 8 2 E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC8D\n",
         // The line is quoted up to 80 characters.
         ", line 1: not a DS or DNSKEY record: . CH DS 20326 8 2 E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC"),
    ])
    func unusableAnchorFileIsAUsageErrorNamingIt(_ name: String, _ contents: String, _ rest: String) async throws {
        let folder = try Self.folder([name: contents])
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent(name).path
        // With validation off too: a bad file never passes silently.
        for mode in ["validate", "off"] {
            let result = try await HostPinBinary.run(["lookup", "www.example.test", "--server", "\(lab.trustedDNS)",
                                                      "--dnssec", mode, "--trust-anchor", path])
            #expect(result.status == 2, "\(mode): \(result.standardError)")
            #expect(Self.errorLine(result) == "invalid value for '--trust-anchor': trust anchor file \(path)\(rest).", "\(mode)")
            #expect(result.standardOutput.isEmpty)
        }
    }

    @Test func missingFileAndDirectoryAreUsageErrors() async throws {
        let folder = try Self.folder([:])
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = folder.appendingPathComponent("absent.ds").path
        for (path, reason) in [(missing, "it does not exist"),
                               (folder.path, "it is not a regular file (a directory, device, FIFO or socket)")] {
            let result = try await HostPinBinary.run(["fetch", "http://www.example.test/", "--server", "\(lab.trustedDNS)",
                                                      "--trust-anchor", path])
            #expect(result.status == 2, "\(result.standardError)")
            #expect(Self.errorLine(result) == "invalid value for '--trust-anchor': trust anchor file \(path): \(reason).")
        }
    }

    /// The second of two files is read too: its bad line is reported though the first is good.
    @Test func everyRepeatedAnchorFileIsRead() async throws {
        let folder = try Self.folder(["root.ds": Self.rootDS, "bad.ds": "garbage\n"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let good = folder.appendingPathComponent("root.ds").path
        let bad = folder.appendingPathComponent("bad.ds").path
        let result = try await HostPinBinary.run(["lookup", "www.example.test", "--server", "\(lab.trustedDNS)",
                                                  "--trust-anchor", good, "--trust-anchor", bad])
        #expect(result.status == 2)
        #expect(Self.errorLine(result) == "invalid value for '--trust-anchor': trust anchor file \(bad), line 1: not a DS or DNSKEY record: garbage.")
    }

    @Test func goodAnchorFilesAreAccepted() async throws {
        let folder = try Self.folder(["root.ds": Self.rootDS])
        defer { try? FileManager.default.removeItem(at: folder) }
        var files = ["--trust-anchor", folder.appendingPathComponent("root.ds").path]
        if let labAnchor = lab.trustAnchor { files += ["--trust-anchor", labAnchor] }
        let result = try await HostPinBinary.run(["lookup", "www.example.test", "--server", "\(lab.trustedDNS)",
                                                  "--dnssec", "off"] + files)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput == "www.example.test. 3600 IN A 127.0.0.10\n")
    }

    // MARK: HOSTPIN_TRUST_ANCHOR

    @Test func environmentFileIsReadWithoutAFlag() async throws {
        let folder = try Self.folder(["bad.ds": "garbage\n"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let bad = folder.appendingPathComponent("bad.ds").path
        let result = try await HostPinBinary.run(["lookup", "www.example.test", "--server", "\(lab.trustedDNS)"],
                                                 environment: ["HOSTPIN_TRUST_ANCHOR": bad])
        #expect(result.status == 2)
        #expect(Self.errorLine(result) == "invalid HOSTPIN_TRUST_ANCHOR: trust anchor file \(bad), line 1: not a DS or DNSKEY record: garbage.")
    }

    @Test func flagWinsOverTheEnvironment() async throws {
        let folder = try Self.folder(["root.ds": Self.rootDS])
        defer { try? FileManager.default.removeItem(at: folder) }
        // The environment names a file that does not exist: it is not read when a flag is given.
        let result = try await HostPinBinary.run(["lookup", "www.example.test", "--server", "\(lab.trustedDNS)",
                                                  "--trust-anchor", folder.appendingPathComponent("root.ds").path],
                                                 environment: ["HOSTPIN_TRUST_ANCHOR": folder.appendingPathComponent("absent").path])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput == "www.example.test. 3600 IN A 127.0.0.10\n")
    }

    @Test func blankEnvironmentIsAUsageError() async throws {
        let result = try await HostPinBinary.run(["lookup", "www.example.test", "--server", "\(lab.trustedDNS)"],
                                                 environment: ["HOSTPIN_TRUST_ANCHOR": " "])
        #expect(result.status == 2)
        #expect(Self.errorLine(result) == "invalid HOSTPIN_TRUST_ANCHOR: it is set but names no file; unset it for the "
                + "built-in IANA root anchors, or name a trust-anchor file.")
    }

    // MARK: --insecure-domain

    @Test(arguments: [
        ("a..b", "'a..b' is not a valid domain name: "),
        ("127.0.0.1", "'127.0.0.1' is an IP address, not a domain name"),
        ("", "'' is not a valid domain name: "),
    ])
    func badInsecureDomainIsAUsageError(_ text: String, _ start: String) async throws {
        let result = try await HostPinBinary.run(["compare", "www.example.test", "--server", "\(lab.trustedDNS)",
                                                  "--local", "\(lab.trustedDNS2)", "--insecure-domain=\(text)"])
        #expect(result.status == 2, "\(result.standardError)")
        #expect(Self.errorLine(result).hasPrefix("invalid value for '--insecure-domain': " + start), "\(result.standardError)")
    }

    @Test func insecureDomainsAreAccepted() async throws {
        let result = try await HostPinBinary.run(["lookup", "www.example.test", "--server", "\(lab.trustedDNS)",
                                                  "--insecure-domain", "corp.test", "--insecure-domain", "Bücher.example."])
        #expect(result.status == 0, "\(result.standardError)")
    }

    // MARK: Help

    @Test(arguments: ["lookup", "compare", "fetch", "proxy", "serve"])
    func helpListsTheDNSSECOptionsWithTheDefault(_ command: String) async throws {
        let result = try await HostPinBinary.run([command, "--help"])
        #expect(result.status == 0)
        for option in ["--dnssec validate|report|off", "--trust-anchor FILE", "--insecure-domain NAME", "HOSTPIN_TRUST_ANCHOR=FILE",
                       "or off (default off)."] {
            #expect(result.standardOutput.contains(option), "\(command): \(option)")
        }
    }
}
