import Foundation
import HostPinTestSupport
import Testing

/// Inputs an adversarial tester found: closed or odd standard streams, control characters, CRLF in
/// headers, overflowing ports, FIFOs and directories as files, CA files curl cannot use, unwritable
/// output. Each test holds the small input that broke the tool, and the exact answer now given.
@Suite struct HostileInputTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    private var http: String { "http://www.example.test:\(lab.httpPort)" }
    private let unused = SilentUpstream.closedPort

    private func usage(_ command: String, _ message: String) -> String {
        "hostpin: error: \(message)\nSee 'hostpin \(command) --help'.\n"
    }

    // MARK: fetch -d @- and @FILE

    @Test(arguments: [
        ("<&-", "Bad file descriptor"),
        ("< /tmp", "Is a directory"),
        ("0>/dev/null", "Bad file descriptor"),
    ])
    func dataFromUnreadableStandardInputIsAUsageError(_ redirection: String, _ reason: String) async throws {
        let result = try await HostPinBinary.run(["fetch", "http://www.example.test/", "-d", "@-", "--server", unused],
                                                 bashSuffix: redirection)
        #expect(result.status == 2)
        #expect(result.standardOutput == "")
        #expect(result.standardError == usage("fetch", "cannot read standard input: \(reason)."))
    }

    @Test(arguments: [
        ("@<(echo hi)", 2, "8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4"),
        ("@/dev/null", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("@/dev/stdin", 3, "fa690b82061edfd2852629aeba8a8977b57e40fcb77d1a7a28b26cba62591204"),
    ])
    func dataFromAFIFOOrDeviceIsRead(_ file: String, _ length: Int, _ digest: String) async throws {
        // -d drops the line breaks: "hi\n" is sent as "hi", "hey\n" from the pipe as "hey".
        let result = try await HostPinBinary.run(["fetch", "\(http)/echo", "--server", "\(lab.trustedDNS)", "-d"],
                                                 bashSuffix: file, input: "hey\n")
        #expect(result.status == 0)
        #expect(result.standardError == "")
        #expect(result.standardOutput
                    == "origin=www host=www.example.test:\(lab.httpPort) method=POST length=\(length) sha256=\(digest)\n")
    }

    @Test(arguments: [
        (["-d", "@/tmp"], "cannot read '/tmp' for '-d': Is a directory."),
        (["--data-binary", "@/tmp"], "cannot read '/tmp' for '--data-binary': Is a directory."),
        (["-d", "@"], "invalid value for '-d': '@' names no file (the file name after @ is empty; @- reads standard input)."),
    ])
    func unusableDataFileIsOneClearSentence(_ options: [String], _ message: String) async throws {
        let result = try await HostPinBinary.run(["fetch", "http://www.example.test/"] + options + ["--server", unused])
        #expect(result.status == 2)
        #expect(result.standardError == usage("fetch", message))
        #expect(!result.standardError.contains("NSCocoaErrorDomain"))
    }

    // MARK: fetch -H and URLs

    @Test(arguments: [
        ("X-A: b\r\nX-Injected: 1", "the value of 'X-A' contains a line break"),
        ("X-A: b\nX-Injected: 1", "the value of 'X-A' contains a line break"),
        ("X-A: b\rX-Injected: 1", "the value of 'X-A' contains a line break"),
        ("X-A: b\u{1}", "the value of 'X-A' contains the control character U+0001"),
    ])
    func controlCharacterInAHeaderValueIsRejected(_ header: String, _ reason: String) async throws {
        let result = try await HostPinBinary.run(["fetch", "http://www.example.test/", "-H", header, "--server", unused])
        #expect(result.status == 2)
        #expect(result.standardError == usage("fetch", "invalid value for '-H': \(reason)."))
    }

    @Test(arguments: ["99999999999999999999", "9223372036854775808", "65536"])
    func portOutOfRangeIsAUsageError(_ port: String) async throws {
        let url = "http://www.example.test:\(port)/"
        let result = try await HostPinBinary.run(["fetch", url, "--server", unused])
        #expect(result.status == 2)
        #expect(result.standardError
                    == usage("fetch", "'\(url)' is not a URL hostpin can fetch: the port \(port) is not from 1 to 65535."))
    }

    // MARK: fetch --ca-file

    @Test func caFileWithoutACertificateExitsSeventySeven() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-not-a-ca-\(UUID()).pem").path
        try Data("not a certificate\n".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await HostPinBinary.run(["fetch", "https://www.example.test:\(lab.httpsPort)/whoami",
                                                  "--ca-file", path, "--server", "\(lab.trustedDNS)"])
        #expect(result.status == 77)
        #expect(result.standardOutput == "")
        #expect(result.standardError == "hostpin: problem with the CA certificate file \(path): "
                    + "it holds no PEM certificate (no -----BEGIN CERTIFICATE----- line)\n")
    }

    @Test func caFileThatIsADirectoryIsAUsageError() async throws {
        let result = try await HostPinBinary.run(["fetch", "https://www.example.test/", "--ca-file", "/tmp", "--server", unused])
        #expect(result.status == 2)
        #expect(result.standardError == usage("fetch", "cannot read '/tmp' for '--ca-file': Is a directory."))
    }

    @Test func helpListsExitSeventySeven() async throws {
        let result = try await HostPinBinary.run(["fetch", "--help"])
        #expect(result.standardOutput.contains(" 77  fetch: problem with the CA certificate file"))
    }

    // MARK: Unwritable standard output

    @Test(arguments: [(">/dev/full", "No space left on device"), (">&-", "Bad file descriptor")])
    func unwritableOutputExitsOne(_ redirection: String, _ reason: String) async throws {
        let commands: [[String]] = [
            ["lookup", "www.example.test", "--server", "\(lab.trustedDNS)"],
            ["lookup", "--batch", "-", "--server", "\(lab.trustedDNS)"],
            ["compare", "www.example.test", "--server", "\(lab.trustedDNS)", "--local", "\(lab.trustedDNS)"],
            ["--help"],
            ["lookup", "--help"],
            ["--version"],
        ]
        for command in commands {
            let result = try await HostPinBinary.run(command, bashSuffix: redirection, input: "www.example.test\n")
            #expect(result.status == 1, "\(command)")
            #expect(result.standardError == "hostpin: cannot write output: \(reason)\n", "\(command)")
        }
    }

    /// A failed write found by the delayed flush (not inside a report) stops the batch too: before, every
    /// name of the input was still asked (200 queries here) before the command exited 1.
    @Test func batchStopsAskingOnceOutputCannotBeWritten() async throws {
        let server = try await FaultServer(mode: .delay(.milliseconds(50)), upstream: lab.trustedDNS)
        defer { server.stop() }
        let names = String(repeating: "www.example.test\n", count: 200)
        let result = try await HostPinBinary.run(["lookup", "--batch", "-", "--server", "\(server.address)", "--dnssec", "off",
                                                  "--concurrency", "1", "--cache-size", "0", "--family", "4"],
                                                 bashSuffix: ">/dev/full", input: names)
        #expect(result.status == 1)
        #expect(result.standardError == "hostpin: cannot write output: No space left on device\n")
        #expect(server.queries.count < 20, "\(server.queries.count) queries after the output failed")
    }

    @Test func unwritableStandardErrorDoesNotTrap() async throws {
        let result = try await HostPinBinary.run(["lookup", "nx.example.test", "--server", "\(lab.trustedDNS)"],
                                                 bashSuffix: "2>/dev/full")
        #expect(result.status == 1)
    }

    // MARK: Control characters echoed to standard error

    @Test(arguments: [
        ("a\u{1B}[31mRED", "'a\\u{1B}[31mRED' is not a valid host name: it contains U+001B, which is not allowed in a host name."),
        ("www\nexample.test",
         "'www\\u{A}example.test' is not a valid host name: it contains U+000A, which is not allowed in a host name."),
        ("www\r.example.test",
         "'www\\u{D}.example.test' is not a valid host name: it contains U+000D, which is not allowed in a host name."),
    ])
    func controlCharactersInANameAreEscaped(_ name: String, _ message: String) async throws {
        let result = try await HostPinBinary.run(["lookup", name, "--server", unused])
        #expect(result.status == 2)
        #expect(result.standardError == usage("lookup", message))
    }

    @Test(arguments: ["a\u{202E}b.example.test", "a\u{2066}b.example.test", "a\u{200F}b.example.test"])
    func bidiControlsInANameAreEscaped(_ name: String) async throws {
        let result = try await HostPinBinary.run(["lookup", name, "--server", unused])
        #expect(result.status == 2)
        let control = name.unicodeScalars.first { $0.value > 0x7F }!
        let escaped = "\\u{" + String(control.value, radix: 16, uppercase: true) + "}"
        #expect(result.standardError.hasPrefix("hostpin: error: 'a\(escaped)b.example.test' is not a valid host name: "))
        #expect(!result.standardError.unicodeScalars.contains(control))
        #expect(result.standardError.filter { $0 == "\n" }.count == 2)
    }

    @Test func nulAndEscapeInABatchLineAreEscaped() async throws {
        let result = try await HostPinBinary.run(["lookup", "--batch", "-", "--server", "\(lab.trustedDNS)"],
                                                 input: "bad\u{0}name\n\u{1B}]0;title\u{7}\n")
        #expect(result.status == 2)
        #expect(result.standardOutput == "")
        #expect(result.standardError == """
            hostpin: 'bad\\u{0}name' is not a valid host name: it contains U+0000, which is not allowed in a host name
            hostpin: '\\u{1B}]0;title\\u{7}' is not a valid host name: it contains U+001B, which is not allowed in a host name

            """)
    }

    @Test func escapeInAHeaderIsEscaped() async throws {
        let result = try await HostPinBinary.run(["fetch", "http://www.example.test/", "-H", "no colon\u{1B}[2J", "--server", unused])
        #expect(result.status == 2)
        #expect(result.standardError == usage("fetch", "invalid value for '-H': 'no colon\\u{1B}[2J' is not a header line 'Name: value'."))
    }
}
