import Foundation
import HostPinTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `--server https://…` and `--server tls://…` with `--bootstrap`, `--pin` and `--ca-file` on every
/// resolving subcommand, against the lab's Unbound (DoH and DoT for dns.example.test at
/// `LAB_DNS_TLS_ADDR`, certificate from the lab CA).
@Suite(.enabled(if: EncryptedLab.current != nil, "the lab has no DoH/DoT server (LAB_DOH_URL)"))
struct EncryptedUpstreamCommandTests {
    let lab: EncryptedLab

    init() throws {
        lab = try #require(EncryptedLab.current)
    }

    /// The one JSON object `result` printed.
    private func object(_ result: ProcessRunner.Result) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
    }

    @Test(arguments: [false, true])
    func lookupThroughAnEncryptedUpstreamAnswersTheTruth(dot: Bool) async throws {
        let server = dot ? lab.dotServer : lab.dohURL
        let result = try await HostPinBinary.run(["lookup", "www.example.test", "--json", "--server", server] + lab.tlsOptions)
        #expect(result.status == 0)
        #expect(result.standardError == "")
        let answer = try object(result)
        #expect(answer["upstream"] as? String == server)
        let addresses = try #require(answer["addresses"] as? [[String: Any]])
        #expect(addresses.map { $0["address"] as? String } == ["127.0.0.10"])
        let ttl = try #require(answer["ttl"] as? Int)
        #expect(ttl > 0 && ttl <= 3600)
    }

    @Test func environmentTakesEncryptedUpstreamsWithTheirBootstrapFromFlags() async throws {
        let result = try await HostPinBinary.run(["lookup", "cdn.example.test", "--json"] + lab.tlsOptions,
                                                 environment: ["HOSTPIN_UPSTREAMS": "\(lab.dotServer),\(lab.dohURL)"])
        #expect(result.status == 0)
        #expect(try object(result)["upstream"] as? String == lab.dotServer)
    }

    @Test func nameWithoutBootstrapIsLookedUpThroughThePlainUpstreamListedAndSaidSo() async throws {
        let result = try await HostPinBinary.run(["lookup", "www.example.test", "--json", "--server", lab.dohURL,
                                                  "--server", lab.lab.trustedDNS.description, "--ca-file", lab.lab.caFile])
        #expect(result.status == 0)
        #expect(result.standardError == "hostpin: no --bootstrap gives dns.example.test's address; looked up through "
                    + "the plain upstreams (\(lab.lab.trustedDNS)): \(lab.address)\n")
        #expect(try object(result)["upstream"] as? String == lab.dohURL)
    }

    @Test(arguments: ["lookup", "compare", "fetch", "proxy"])
    func nameWithoutBootstrapOrPlainUpstreamIsAUsageError(subcommand: String) async throws {
        let target = subcommand == "fetch" ? "http://www.example.test/" : "www.example.test"
        let arguments = subcommand == "proxy" ? [subcommand] : [subcommand, target]
        let result = try await HostPinBinary.run(arguments + ["--server", lab.dohURL, "--server", lab.dotServer,
                                                              "--ca-file", lab.lab.caFile])
        #expect(result.status == 2)
        #expect(result.standardOutput == "")
        #expect(result.standardError == """
            hostpin: error: '\(lab.dohURL)' names its server by host name, and nothing says where dns.example.test is: \
            give --bootstrap dns.example.test=IP[,IP...], or list a plain upstream (IP:PORT) to look it up through \
            (the system resolver is never asked).
            See 'hostpin \(subcommand) --help'.

            """)
    }

    @Test func environmentWithAnUnbootstrappedNameIsAUsageErrorToo() async throws {
        let result = try await HostPinBinary.run(["lookup", "www.example.test"], environment: ["HOSTPIN_UPSTREAMS": lab.dotServer])
        #expect(result.status == 2)
        #expect(result.standardError.hasPrefix("hostpin: error: '\(lab.dotServer)' names its server by host name"))
    }

    @Test(arguments: [
        (["--bootstrap", "dns.example.test"], "invalid value for '--bootstrap': 'dns.example.test' has no NAME= before its value."),
        (["--bootstrap", "dns.example.test=nowhere"],
         "invalid value for '--bootstrap': 'dns.example.test=nowhere' lists 'nowhere', which is not an IP address."),
        (["--pin", "dns.example.test=sha256//abc"],
         "invalid value for '--pin': 'sha256//abc' is not a public key pin: expected sha256// followed by the base64 of a 32-octet SHA-256 digest."),
        (["--server", "https://dns.example.test"],
         "invalid value for '--server': 'https://dns.example.test' has no path: a DNS over HTTPS upstream needs one, such as /dns-query."),
        (["--ca-file", "/nonexistent/ca.pem"],
         "cannot read '/nonexistent/ca.pem' for '--ca-file': No such file or directory."),
    ])
    func badEncryptedOptionIsAUsageError(_ options: [String], _ message: String) async throws {
        let result = try await HostPinBinary.run(["lookup", "www.example.test", "--server", SilentUpstream.closedPort] + options)
        #expect(result.status == 2)
        #expect(result.standardError == "hostpin: error: \(message)\nSee 'hostpin lookup --help'.\n")
    }

    @Test func pinOfTheServersKeyIsAcceptedAndAnyOtherRefused() async throws {
        let serverPin = try await Self.pin(ofCertificate: lab.serverCertificate)
        let caPin = try await Self.pin(ofCertificate: lab.lab.caFile)
        let matching = try await HostPinBinary.run(["lookup", "www.example.test", "--server", lab.dohURL,
                                                    "--pin", "dns.example.test=\(caPin);\(serverPin)"] + lab.tlsOptions)
        #expect(matching.status == 0)
        #expect(matching.standardOutput.hasSuffix(" IN A 127.0.0.10\n; secure\n"))

        let other = try await HostPinBinary.run(["lookup", "www.example.test", "--server", lab.dohURL,
                                                 "--pin", "dns.example.test=\(caPin)"] + lab.tlsOptions)
        #expect(other.status == 3)
        #expect(other.standardOutput == "")
        #expect(other.standardError
                    == "hostpin: www.example.test: no trusted upstream answered: \(lab.dohURL): the upstream's public key matches none of its pins\n")
    }

    @Test func withoutTheLabCATheUpstreamsCertificateIsNotTrusted() async throws {
        let result = try await HostPinBinary.run(["lookup", "www.example.test", "--server", lab.dotServer,
                                                  "--bootstrap", "dns.example.test=\(lab.address)"])
        #expect(result.status == 3)
        #expect(result.standardError.hasPrefix("hostpin: www.example.test: no trusted upstream answered: \(lab.dotServer): "
                                                + "the upstream's certificate is not trusted: "))
    }

    @Test func failingEncryptedUpstreamFailsOverToTheNextListed() async throws {
        let result = try await HostPinBinary.run(["lookup", "www.example.test", "--json", "--server", lab.dohURL,
                                                  "--pin", "dns.example.test=sha256//" + String(repeating: "A", count: 43) + "=",
                                                  "--server", lab.lab.trustedDNS.description] + lab.tlsOptions)
        #expect(result.status == 0)
        #expect(try object(result)["upstream"] as? String == lab.lab.trustedDNS.description)
    }

    @Test func fetchResolvesThroughAnEncryptedUpstream() async throws {
        let result = try await HostPinBinary.run(["fetch", "https://www.example.test:\(lab.lab.httpsPort)/whoami",
                                                  "--server", lab.dotServer] + lab.tlsOptions)
        #expect(result.status == 0)
        #expect(result.standardOutput == "origin=www host=www.example.test:\(lab.lab.httpsPort)\n")
    }

    @Test func proxyResolvesThroughAnEncryptedUpstream() async throws {
        let errorPath = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-doh-proxy-\(UUID().uuidString)").path
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: errorPath) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try HostPinBinary.path())
        process.arguments = ["proxy", "--listen", "127.0.0.1:0", "--allow-private", "--server", lab.dohURL] + lab.tlsOptions
        process.environment = ProcessInfo.processInfo.environment.merging(["HOSTPIN_UPSTREAMS": ""]) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        try process.run()
        let pid = process.processIdentifier
        defer { kill(pid, SIGKILL) }
        var listening: String?
        for _ in 0..<500 where listening == nil && process.isRunning {
            let text = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
            listening = text.split(separator: "\n").first { $0.hasPrefix("listening on ") }.map { String($0.dropFirst(13)) }
            if listening == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        let address = try #require(listening, "the proxy did not start: \((try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "")")
        let curl = try await ProcessRunner.run("/usr/bin/curl", ["-s", "-x", "http://\(address)",
                                                                 "http://www.example.test:\(lab.lab.httpPort)/whoami"])
        #expect(curl.status == 0)
        #expect(curl.standardOutput == "origin=www host=www.example.test:\(lab.lab.httpPort)\n")
    }

    /// `sha256//BASE64` of the public key in the PEM certificate at `path`.
    static func pin(ofCertificate path: String) async throws -> String {
        let result = try await ProcessRunner.run("/bin/bash", ["-c", """
            openssl x509 -pubkey -noout -in "$1" | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64
            """, "pin", path])
        let digest = result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        guard result.status == 0, !digest.isEmpty else { throw EncryptedLab.Missing(description: "openssl: \(result.standardError)") }
        return "sha256//" + digest
    }
}

/// The lab with its DoH/DoT server (Unbound): the values the command lines above need.
struct EncryptedLab: Sendable {
    struct Missing: Error, CustomStringConvertible {
        let description: String
    }

    let lab: Lab
    /// `LAB_DOH_URL`: `https://dns.example.test:PORT/dns-query`.
    let dohURL: String
    /// `LAB_DOT_SERVER`: `tls://dns.example.test:PORT`.
    let dotServer: String
    /// `LAB_DNS_TLS_ADDR`, where dns.example.test listens.
    let address: String

    static let current: EncryptedLab? = {
        guard let lab = try? Lab.current(), let doh = lab.dohURL, let dot = lab.dotServer, let address = lab.dnsTLSAddress
        else { return nil }
        return EncryptedLab(lab: lab, dohURL: doh, dotServer: dot, address: address)
    }()

    /// `--bootstrap dns.example.test=ADDRESS --ca-file LAB_CA_FILE`.
    var tlsOptions: [String] { ["--bootstrap", "dns.example.test=\(address)", "--ca-file", lab.caFile] }

    /// The certificate Unbound serves (beside the lab CA's).
    var serverCertificate: String {
        URL(fileURLWithPath: lab.caFile).deletingLastPathComponent().appendingPathComponent("server.crt").path
    }
}
