import Foundation
import HostPinTestSupport
import Testing

/// Upstream options that cannot work are usage errors before anything is sent: an empty
/// `HOSTPIN_UPSTREAMS`, a `--pin` or `--bootstrap` for a name no upstream uses, a `--ca-file` without
/// a certificate; and a failed name is named in `lookup`'s error.
@Suite struct UpstreamOptionChecksTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    /// A public key pin that matches nothing (never checked: these command lines fail before).
    static let pin = "sha256//" + Data(count: 32).base64EncodedString()

    @Test(arguments: ["", "   "])
    func anEmptyEnvironmentIsAUsageErrorNotTheDefaults(_ value: String) async throws {
        // In a network namespace of its own (only a loopback that is down), so that even if hostpin fell
        // back to the public defaults nothing could leave the machine; --timeout 0.2 ends it quickly.
        let result = try await ProcessRunner.run("/bin/bash", ["-c", "exec /usr/bin/unshare --net \"$0\" \"$@\"", try HostPinBinary.path(),
                                                               "lookup", "--timeout", "0.2", "www.example.test"],
                                                 environment: ["HOSTPIN_UPSTREAMS": value])
        #expect(result.status == 2, "\(result.standardError)")
        #expect(result.standardOutput == "")
        #expect(result.standardError == "hostpin: error: HOSTPIN_UPSTREAMS is set but names no upstream; unset it to use the "
                    + "defaults, or give IP:PORT/URL values.\nSee 'hostpin lookup --help'.\n")
    }

    @Test(arguments: [["--pin", "dns.exampel.test=\(pin)"], ["--bootstrap", "dns.exampel.test=127.0.0.1"]])
    func aPinOrBootstrapForANameNoUpstreamUsesIsAUsageError(_ option: [String]) async throws {
        let result = try await HostPinBinary.run(["lookup", "www.example.test", "--timeout", "1", "--server", "tls://dns.example.test:1",
                                                  "--server", "\(lab.trustedDNS)", "--bootstrap", "dns.example.test=127.0.0.1"] + option)
        #expect(result.status == 2)
        #expect(result.standardOutput == "")
        #expect(result.standardError == "hostpin: error: \(option[0]) names dns.exampel.test, which no upstream uses "
                    + "(the upstreams' names: dns.example.test).\nSee 'hostpin lookup --help'.\n")
    }

    @Test func aPinWithOnlyPlainUpstreamsIsAUsageError() async throws {
        let result = try await HostPinBinary.run(["lookup", "www.example.test", "--server", "\(lab.trustedDNS)",
                                                  "--pin", "dns.example.test=\(Self.pin)"])
        #expect(result.status == 2)
        #expect(result.standardError == "hostpin: error: --pin names dns.example.test, which no upstream uses "
                    + "(no upstream listed is named: plain ones are only addresses).\nSee 'hostpin lookup --help'.\n")
    }

    @Test(arguments: ["lookup", "compare", "proxy", "serve", "fetch"])
    func aCAFileWithoutACertificateIsFoundBeforeAnyQuery(_ command: String) async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-no-ca-\(UUID()).pem").path
        try Data("not a certificate\n".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let target = switch command {
        case "lookup", "compare": ["www.example.test"]
        case "fetch": ["https://www.example.test:\(lab.httpsPort)/whoami"]
        case "proxy": ["--listen", "127.0.0.1:0"]
        default: ["--dns-listen", "127.0.0.1:0"]
        }
        // A run that got past the check would run (proxy, serve) until killed: the timeout ends it.
        let result = try await ProcessRunner.run("/usr/bin/timeout", ["10", try HostPinBinary.path(), command] + target
                                                    + ["--server", "\(lab.trustedDNS)", "--ca-file", path],
                                                 environment: ["HOSTPIN_UPSTREAMS": ""])
        let sentence = "problem with the CA certificate file \(path): it holds no PEM certificate (no -----BEGIN CERTIFICATE----- line)"
        if command == "fetch" {
            #expect(result.status == 77)
            #expect(result.standardError == "hostpin: \(sentence)\n")
        } else {
            #expect(result.status == 2, "\(result.standardError)")
            #expect(result.standardError == "hostpin: error: \(sentence).\nSee 'hostpin \(command) --help'.\n")
        }
    }

    @Test(arguments: ["lookup", "compare", "proxy", "serve", "fetch"])
    func aMissingCAFileIsAUsageError(_ command: String) async throws {
        let result = try await ProcessRunner.run("/usr/bin/timeout", ["10", try HostPinBinary.path(), command, "--server", "\(lab.trustedDNS)",
                                                                      "--ca-file", "/nonexistent/ca.pem"],
                                                 environment: ["HOSTPIN_UPSTREAMS": ""])
        #expect(result.status == 2)
        #expect(result.standardError.hasPrefix("hostpin: error: cannot read '/nonexistent/ca.pem' for '--ca-file': No such file or directory."))
    }

    @Test func aFailedNameIsNamedInLookupsError() async throws {
        let fault = try #require(Self.labValue("LAB_FAULT_DNS"), "the lab has no fault server (LAB_FAULT_DNS)")
        let result = try await HostPinBinary.run(["lookup", "servfail.fault.test", "--server", fault, "--timeout", "2"])
        #expect(result.status == 3)
        #expect(result.standardError == "hostpin: servfail.fault.test: no trusted upstream answered: \(fault): SERVFAIL\n")
    }

    /// A lab variable the ``Lab`` type does not carry, from the environment or `.lab/env`.
    private static func labValue(_ name: String) -> String? {
        if let value = ProcessInfo.processInfo.environment[name], !value.isEmpty { return value }
        let file = Lab.repositoryRoot.appendingPathComponent(".lab/env")
        let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").first { $0.hasPrefix("export \(name)=") }
            .map { String($0.dropFirst("export \(name)=".count)).trimmingCharacters(in: CharacterSet(charactersIn: "'\"")) }
    }
}
