import Foundation
import HostPinTestSupport
import Testing

/// `hostpin fetch` against the lab's origins through the trusted NSD: what reaches stdout, the file
/// written, stderr's sentence and curl's exit codes. No test here asks the hijacker (see
/// ``FetchHijackerOptInTests``).
@Suite struct FetchCommandTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    private var http: String { "http://www.example.test:\(lab.httpPort)" }
    private var https: String { "https://www.example.test:\(lab.httpsPort)" }

    /// Runs `hostpin fetch arguments… --server <trusted> --timeout 2`.
    private func fetch(_ arguments: String...) async throws -> ProcessRunner.Result {
        try await HostPinBinary.run(["fetch"] + arguments + ["--server", "\(lab.trustedDNS)", "--timeout", "2"])
    }

    // MARK: Pinned requests

    @Test func plainHTTPReachesTheTrueOriginWithTheOriginalHost() async throws {
        let result = try await fetch("\(http)/whoami")
        #expect(result.status == 0)
        #expect(result.standardOutput == "origin=www host=www.example.test:\(lab.httpPort)\n")
        #expect(result.standardError == "")
    }

    @Test func includePrintsStatusLineAndHeadersFirst() async throws {
        let result = try await fetch("-i", "\(http)/whoami")
        #expect(result.status == 0)
        let (head, body) = try Self.split(result.standardOutput)
        #expect(head.first == "HTTP/1.1 200 OK")
        #expect(head.contains("Content-Type: text/plain"))
        #expect(head.dropFirst().allSatisfy { $0.contains(": ") })
        #expect(body == "origin=www host=www.example.test:\(lab.httpPort)\n")
        #expect(try await fetch("--include", "\(http)/whoami").standardOutput.hasPrefix("HTTP/1.1 200 OK\r\n"))
    }

    @Test func httpsWithTheLabCAIsPinnedAndVerified() async throws {
        let result = try await fetch("\(https)/whoami", "--ca-file", lab.caFile)
        #expect(result.status == 0)
        #expect(result.standardOutput == "origin=www host=www.example.test:\(lab.httpsPort)\n")
        #expect(result.standardError == "")
    }

    @Test func httpsWithoutTheLabCAExitsSixty() async throws {
        let result = try await fetch("\(https)/whoami")
        #expect(result.status == 60)
        #expect(result.standardOutput == "")
        #expect(result.standardError.hasPrefix("hostpin: the certificate of www.example.test:\(lab.httpsPort) is not trusted: "))
        #expect(result.standardError.filter { $0 == "\n" }.count == 1)
    }

    @Test func certificateForAnotherNameExitsSixty() async throws {
        let result = try await fetch("https://wrongcert.example.test:\(lab.httpsPort)/whoami", "--ca-file", lab.caFile)
        #expect(result.status == 60)
        #expect(result.standardOutput == "")
        #expect(result.standardError.hasPrefix("hostpin: the certificate of wrongcert.example.test:\(lab.httpsPort) is not trusted: "))
    }

    @Test func tlsToAPlainHTTPServerExitsThirtyFive() async throws {
        let result = try await fetch("https://www.example.test:\(lab.httpPort)/whoami", "--ca-file", lab.caFile)
        #expect(result.status == 35)
        #expect(result.standardOutput == "")
        #expect(result.standardError.hasPrefix("hostpin: the TLS handshake with www.example.test:\(lab.httpPort) failed: "))
    }

    @Test(arguments: [false, true])
    func firstAddressDeadFailsOverToTheNext(_ secure: Bool) async throws {
        let port = secure ? lab.httpsPort : lab.httpPort
        let result = try await fetch("\(secure ? "https" : "http")://multi.example.test:\(port)/whoami", "--ca-file", lab.caFile)
        #expect(result.status == 0)
        #expect(result.standardOutput == "origin=www host=multi.example.test:\(port)\n")
    }

    @Test(arguments: [false, true])
    func ipv6OnlyNameReachesTheV6Origin(_ secure: Bool) async throws {
        let port = secure ? lab.httpsPort : lab.httpPort
        let result = try await fetch("\(secure ? "https" : "http")://v6only.example.test:\(port)/whoami", "--ca-file", lab.caFile)
        #expect(result.status == 0)
        #expect(result.standardOutput == "origin=v6 host=v6only.example.test:\(port)\n")
    }

    @Test func unicodeHostIsFetchedByItsALabel() async throws {
        let result = try await fetch("http://bücher.example.test:\(lab.httpPort)/whoami")
        #expect(result.status == 0)
        #expect(result.standardOutput == "origin=www host=xn--bcher-kva.example.test:\(lab.httpPort)\n")
    }

    @Test func urlWithoutSchemeIsHTTP() async throws {
        let result = try await fetch("www.example.test:\(lab.httpPort)/whoami")
        #expect(result.status == 0)
        #expect(result.standardOutput == "origin=www host=www.example.test:\(lab.httpPort)\n")
    }

    // MARK: Resolution and connection failures

    @Test func nxdomainExitsSix() async throws {
        let result = try await fetch("http://nx.example.test:\(lab.httpPort)/whoami")
        #expect(result.status == 6)
        #expect(result.standardOutput == "")
        #expect(result.standardError == "hostpin: could not resolve host nx.example.test: NXDOMAIN (the name does not exist)\n")
    }

    @Test func closedUpstreamExitsSix() async throws {
        let result = try await HostPinBinary.run(["fetch", "\(http)/whoami", "--server", SilentUpstream.closedPort, "--timeout", "1"])
        #expect(result.status == 6)
        #expect(result.standardOutput == "")
        #expect(result.standardError.hasPrefix("hostpin: could not resolve host www.example.test: no trusted upstream answered: \(SilentUpstream.closedPort): "))
    }

    @Test func blackHoleUpstreamExitsSixWithinTheBudget() async throws {
        try await SilentUpstream.with { silent in
            let started = ContinuousClock.now
            let result = try await HostPinBinary.run(["fetch", "\(http)/whoami", "--server", silent, "--timeout", "1"])
            #expect(ContinuousClock.now - started < .milliseconds(4500))  // generous: a loaded 2-core machine
            #expect(result.status == 6)
            #expect(result.standardOutput == "")
            #expect(result.standardError.hasPrefix("hostpin: could not resolve host www.example.test: "))
        }
    }

    @Test func upstreamsFromTheEnvironmentAreUsed() async throws {
        let result = try await HostPinBinary.run(["fetch", "\(http)/whoami"], environment: ["HOSTPIN_UPSTREAMS": "\(lab.trustedDNS)"])
        #expect(result.status == 0)
        #expect(result.standardOutput == "origin=www host=www.example.test:\(lab.httpPort)\n")
    }

    @Test func nothingListeningExitsSeven() async throws {
        let result = try await fetch("http://www.example.test:1/whoami")
        #expect(result.status == 7)
        #expect(result.standardOutput == "")
        #expect(result.standardError.hasPrefix("hostpin: could not connect to www.example.test:1: "))
    }

    @Test func maxTimeStopsASlowResponseWithTwentyEight() async throws {
        let started = ContinuousClock.now
        let result = try await fetch("\(http)/slow/5000", "--max-time", "1")
        #expect(ContinuousClock.now - started < .milliseconds(4500))  // generous: a loaded 2-core machine
        #expect(result.status == 28)
        #expect(result.standardOutput == "")
        #expect(result.standardError == "hostpin: operation timed out after 1 s (--max-time) with 0 bytes received\n")
    }

    @Test func maxTimeLongEnoughLetsTheResponseFinish() async throws {
        let result = try await fetch("\(http)/slow/200", "--max-time", "5")
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput == "slow\n")
    }

    // MARK: Status codes

    @Test func failOnNotFoundExitsTwentyTwoAndPrintsNoBody() async throws {
        let result = try await fetch("--fail", "\(http)/status/404")
        #expect(result.status == 22)
        #expect(result.standardOutput == "")
        #expect(result.standardError == "hostpin: The requested URL returned error: 404\n")
        let short = try await fetch("-f", "-i", "\(http)/status/503")
        #expect(short.status == 22)
        #expect(short.standardOutput == "")
        #expect(short.standardError == "hostpin: The requested URL returned error: 503\n")
    }

    @Test func failWithASuccessfulStatusPrintsTheBody() async throws {
        let result = try await fetch("--fail", "\(http)/status/201")
        #expect(result.status == 0)
        #expect(result.standardOutput == "status=201\n")
    }

    @Test func notFoundWithoutFailIsAResponse() async throws {
        let result = try await fetch("\(http)/status/404")
        #expect(result.status == 0)
        #expect(result.standardOutput == "status=404\n")
        #expect(result.standardError == "")
        let included = try await fetch("-i", "\(http)/status/404")
        #expect(included.standardOutput.hasPrefix("HTTP/1.1 404 Not Found\r\n"))
    }

    // MARK: Output

    @Test func outputFileReceivesTheBodyByteForByte() async throws {
        try await Scratch.with { folder in
            let path = folder + "/bytes.bin"
            let result = try await fetch("-o", path, "\(http)/bytes/300000")
            #expect(result.status == 0)
            #expect(result.standardOutput == "")
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(data.count == 300_000)
            #expect(data.enumerated().allSatisfy { Int($0.element) == $0.offset % 251 })
        }
    }

    @Test func outputFileWithIncludeHoldsTheHeadToo() async throws {
        try await Scratch.with { folder in
            let path = folder + "/whoami.txt"
            let result = try await fetch("--output", path, "-i", "\(http)/whoami")
            #expect(result.status == 0)
            let text = try String(contentsOfFile: path, encoding: .utf8)
            #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(text.hasSuffix("\r\n\r\norigin=www host=www.example.test:\(lab.httpPort)\n"))
        }
    }

    @Test func bodyStreamsToStandardOutputAsItArrives() async throws {
        // /drip/3/700: one byte every 700 ms. A streamed body reaches the pipe in more than one piece; a
        // buffered one is written once, at the end. Counting pieces, not timing them: a busy machine may
        // delay the reader by hundreds of milliseconds (CI saw 0.94 s where 1.4 s was expected).
        let path = try HostPinBinary.path()
        let arguments = ["fetch", "\(http)/drip/3/700", "--server", "\(lab.trustedDNS)", "--timeout", "2"]
        // Blocking pipe reads run on a thread of their own, not on the test pool's few threads.
        let (process, pieces) = try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { () throws -> (Process, [Data]) in
                    let process = Process()
                    process.executableURL = URL(fileURLWithPath: path)
                    process.arguments = arguments
                    process.environment = ProcessInfo.processInfo.environment.merging(["HOSTPIN_UPSTREAMS": ""]) { $1 }
                    let output = Pipe()
                    process.standardOutput = output
                    try process.run()
                    var pieces: [Data] = []
                    while case let piece = output.fileHandleForReading.availableData, !piece.isEmpty {
                        pieces.append(piece)
                    }
                    process.waitUntilExit()
                    return (process, pieces)
                })
            }.start()
        }
        #expect(process.terminationStatus == 0)
        #expect(pieces.count >= 2, "the body came in \(pieces.count) piece(s): it was buffered")
        #expect(pieces.reduce(Data(), +) == Data([0, 1, 2]))
    }

    @Test(arguments: [false, true])
    func hundredMebibyteDownloadIsNotHeldInMemory(_ secure: Bool) async throws {
        let base = secure ? https : http
        let idle = try await Self.peakResidentKiB(["fetch", "\(base)/slow/300", "-o", "/dev/null", "--ca-file", lab.caFile,
                                             "--server", "\(lab.trustedDNS)"])
        let download = try await Self.peakResidentKiB(["fetch", "\(base)/bytes/104857600", "-o", "/dev/null",
                                                 "--ca-file", lab.caFile, "--server", "\(lab.trustedDNS)"])
        #expect(download.status == 0)
        #expect(download.peakKiB - idle.peakKiB < 32 * 1024,
                "peak RSS \(download.peakKiB) KiB downloading 100 MiB vs \(idle.peakKiB) KiB idle")
    }

    @Test func failCreatesNoOutputFile() async throws {
        try await Scratch.with { folder in
            let path = folder + "/missing.txt"
            let result = try await fetch("--fail", "-o", path, "\(http)/status/404")
            #expect(result.status == 22)
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }

    @Test func unwritableOutputExitsOne() async throws {
        let result = try await fetch("-o", "/nonexistent-folder/out", "\(http)/whoami")
        #expect(result.status == 1)
        #expect(result.standardError == "hostpin: could not write to /nonexistent-folder/out: No such file or directory\n")
    }

    // MARK: Request bodies, methods, headers

    @Test func methodAndDataReachTheOrigin() async throws {
        let result = try await fetch("-X", "PUT", "-d", "hello", "\(http)/echo")
        #expect(result.status == 0)
        #expect(result.standardOutput == "origin=www host=www.example.test:\(lab.httpPort) method=PUT length=5 "
                    + "sha256=2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824\n")
    }

    @Test func dataAloneIsAFormPOST() async throws {
        let echo = try await fetch("-d", "a=1", "-d", "b=2", "\(http)/echo")
        #expect(echo.standardOutput.contains(" method=POST length=7 sha256=\(try await Self.sha256(Data("a=1&b=2".utf8)))"))
        let headers = try await fetch("-d", "a=1", "\(http)/headers")
        #expect(headers.standardOutput.contains("Content-Type: application/x-www-form-urlencoded\n"))
        let overridden = try await fetch("-d", "{}", "-H", "Content-Type: application/json", "\(http)/headers")
        #expect(overridden.standardOutput.contains("Content-Type: application/json\n"))
        #expect(!overridden.standardOutput.contains("x-www-form-urlencoded"))
    }

    @Test func dataBinaryFileIsSentByteForByte() async throws {
        try await Scratch.with { folder in
            let path = folder + "/body.bin"
            let bytes = Data([0x61, 0x0D, 0x0A, 0x00, 0x62, 0xFF, 0x0A, 0x00, 0x0D])
            try bytes.write(to: URL(fileURLWithPath: path))
            let result = try await fetch("--data-binary", "@" + path, "\(http)/echo")
            #expect(result.status == 0)
            #expect(result.standardOutput == "origin=www host=www.example.test:\(lab.httpPort) method=POST length=9 "
                        + "sha256=\(try await Self.sha256(bytes))\n")
        }
    }

    @Test(arguments: [false, true])
    func tenMebibyteFileArrivesWithTheRightDigest(_ secure: Bool) async throws {
        try await Scratch.with { folder in
            let path = folder + "/ten.bin"
            var bytes = Data(count: 10 << 20)
            bytes.withUnsafeMutableBytes { buffer in
                for index in buffer.indices { buffer[index] = UInt8(truncatingIfNeeded: index &* 31 &+ index >> 9) }
            }
            try bytes.write(to: URL(fileURLWithPath: path))
            let base = secure ? https : http
            let port = secure ? lab.httpsPort : lab.httpPort
            let result = try await fetch("--data-binary", "@" + path, "\(base)/echo", "--ca-file", lab.caFile)
            #expect(result.status == 0)
            #expect(result.standardOutput == "origin=www host=www.example.test:\(port) method=POST length=\(10 << 20) "
                        + "sha256=\(try await Self.sha256(bytes))\n")
        }
    }

    @Test func dataFileLosesItsLineBreaksAsInCurl() async throws {
        try await Scratch.with { folder in
            let path = folder + "/form.txt"
            try Data("x=1\r\ny=2\n".utf8).write(to: URL(fileURLWithPath: path))
            let result = try await fetch("-d", "@" + path, "\(http)/echo")
            #expect(result.status == 0)
            #expect(result.standardOutput.hasSuffix(" method=POST length=6 sha256=\(try await Self.sha256(Data("x=1y=2".utf8)))\n"))
        }
    }

    @Test func dataRawKeepsTheAtSign() async throws {
        let result = try await fetch("--data-raw", "@not-a-file", "\(http)/echo")
        #expect(result.status == 0)
        #expect(result.standardOutput.hasSuffix(" length=11 sha256=\(try await Self.sha256(Data("@not-a-file".utf8)))\n"))
    }

    @Test func headerOptionsReachTheOrigin() async throws {
        let result = try await fetch("-H", "X-Test: 1", "--header", "X-Other:two", "-H", "Empty;", "\(http)/headers")
        #expect(result.status == 0)
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.contains("X-Test: 1"))
        #expect(lines.contains("X-Other: two"))
        #expect(lines.contains("Host: www.example.test:\(lab.httpPort)"))
        #expect(lines.contains("User-Agent: hostpin/0.1.0"))
        let agent = try await fetch("-H", "User-Agent: tester/1", "\(http)/headers")
        #expect(agent.standardOutput.split(separator: "\n").contains("User-Agent: tester/1"))
    }

    // MARK: Redirects

    @Test func locationFollowsARelativeRedirect() async throws {
        let result = try await fetch("-L", "\(http)/redirect/302?to=/whoami")
        #expect(result.status == 0)
        #expect(result.standardOutput == "origin=www host=www.example.test:\(lab.httpPort)\n")
    }

    @Test func withoutLocationTheRedirectIsTheResponse() async throws {
        let result = try await fetch("\(http)/redirect/302?to=/whoami")
        #expect(result.status == 0)
        #expect(result.standardOutput == "redirect\n")
        let included = try await fetch("-i", "\(http)/redirect/302?to=/whoami")
        #expect(included.status == 0)
        let (head, body) = try Self.split(included.standardOutput)
        #expect(head.first == "HTTP/1.1 302 Found")
        #expect(head.contains("Location: /whoami"))
        #expect(body == "redirect\n")
    }

    @Test func locationFollowsACrossHostRedirectPinnedOnItsOwn() async throws {
        let target = "http://cdn.example.test:\(lab.httpPort)/whoami"
        let result = try await fetch("--location", "\(http)/redirect/301?to=\(target)")
        #expect(result.status == 0)
        #expect(result.standardOutput == "origin=cdn host=cdn.example.test:\(lab.httpPort)\n")
    }

    /// curl's rule for -H credentials: the same host keeps Cookie and Authorization on every hop.
    @Test(arguments: [false, true])
    func locationKeepsCookieAndAuthorizationOnTheSameHost(_ secure: Bool) async throws {
        let base = secure ? https : http
        let result = try await fetch("-L", "-H", "Cookie: sid=1", "-H", "Authorization: Bearer x", "-H", "X-Test: 1",
                                     "\(base)/redirect/302?to=/headers", "--ca-file", lab.caFile)
        #expect(result.status == 0)
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.contains("Cookie: sid=1"))
        #expect(lines.contains("Authorization: Bearer x"))
        #expect(lines.contains("X-Test: 1"))
    }

    /// … and another host (or scheme and port) gets neither, while other -H fields still go along.
    @Test(arguments: ["http://cdn.example.test:PORT/headers", "https://cdn.example.test:TLSPORT/headers",
                      "https://www.example.test:TLSPORT/headers"])
    func locationDropsCookieAndAuthorizationOnAnotherHost(_ pattern: String) async throws {
        let target = pattern.replacingOccurrences(of: "TLSPORT", with: "\(lab.httpsPort)")
            .replacingOccurrences(of: "PORT", with: "\(lab.httpPort)")
        let result = try await fetch("-L", "-H", "Cookie: sid=1", "-H", "Authorization: Bearer x", "-H", "X-Test: 1",
                                     "\(http)/redirect/302?to=\(target)", "--ca-file", lab.caFile)
        #expect(result.status == 0)
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.contains("X-Test: 1"))
        #expect(!lines.contains { $0.hasPrefix("Cookie:") || $0.hasPrefix("Authorization:") }, "\(lines)")
    }

    @Test func seeOtherTurnsPOSTIntoGET() async throws {
        let result = try await fetch("-L", "-d", "hello", "\(http)/redirect/303?to=/echo")
        #expect(result.status == 0)
        #expect(result.standardOutput.hasSuffix(" method=GET length=0 sha256=\(try await Self.sha256(Data()))\n"))
    }

    @Test(arguments: [307, 308])
    func temporaryAndPermanentRedirectsKeepMethodAndBody(_ code: Int) async throws {
        let result = try await fetch("-L", "-X", "PUT", "-d", "hello", "\(http)/redirect/\(code)?to=/echo")
        #expect(result.status == 0)
        #expect(result.standardOutput.hasSuffix(" method=PUT length=5 sha256=\(try await Self.sha256(Data("hello".utf8)))\n"))
    }

    @Test func redirectLoopEndsWithFortySeven() async throws {
        let result = try await fetch("-L", "\(http)/redirect-chain/20")
        #expect(result.status == 47)
        #expect(result.standardOutput == "")
        #expect(result.standardError == "hostpin: too many redirects (more than 16) from \(http)/redirect-chain/20\n")
        let within = try await fetch("-L", "\(http)/redirect-chain/16")
        #expect(within.status == 0)
        #expect(within.standardOutput == "chain-end origin=www host=www.example.test:\(lab.httpPort) method=GET\n")
    }

    // MARK: Rules (--rules)

    /// A 2×2 RGB PNG.
    static let logo = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEUlEQVR4nGP4z8DA8B+MgBgAHfAD/dPQfSYAAAAASUVORK5CYII=")!

    /// Runs `fetch arguments… --rules FILE` with `rules` (`PORT` standing for the lab's HTTP port) and
    /// `files` written to a scratch folder; `body` gets the result and the folder.
    private func fetch(rules: String, files: [String: Data] = [:], _ arguments: String...,
                       check body: (ProcessRunner.Result, String) async throws -> Void) async throws {
        try await Scratch.with { folder in
            for (name, data) in files { try data.write(to: URL(fileURLWithPath: folder + "/" + name)) }
            let json = "{\"rules\": [\(rules.replacingOccurrences(of: "PORT", with: "\(lab.httpPort)"))]}"
            try Data(json.utf8).write(to: URL(fileURLWithPath: folder + "/rules.json"))
            let result = try await HostPinBinary.run(["fetch", "--rules", folder + "/rules.json"] + arguments
                                                     + ["--server", "\(lab.trustedDNS)", "--timeout", "2"])
            try await body(result, folder)
        }
    }

    @Test func rulesAnswerTheLogoFromALocalPNG() async throws {
        try await Scratch.with { out in
            try await fetch(rules: "{\"action\": \"respond\", \"url\": \"\(http)/logo.png\", \"file\": \"logo.png\"}",
                            files: ["logo.png": Self.logo], "-o", out + "/logo.png", "\(http)/logo.png") { result, _ in
                #expect(result.status == 0)
                #expect(result.standardError == "")
                let written = try Data(contentsOf: URL(fileURLWithPath: out + "/logo.png"))
                #expect(written == Self.logo)
            }
        }
        try await fetch(rules: "{\"action\": \"respond\", \"url\": \"\(http)/logo.png\", \"file\": \"logo.png\"}",
                        files: ["logo.png": Self.logo], "-i", "-X", "HEAD", "\(http)/logo.png") { result, _ in
            let (head, body) = try Self.split(result.standardOutput)
            #expect(head == ["HTTP/1.1 200 OK", "Content-Length: \(Self.logo.count)", "Content-Type: image/png"])
            #expect(body == "")
        }
    }

    @Test func rulesRedirectTheStylesheetTransparentlyToAnotherOrigin() async throws {
        try await fetch(rules: "{\"action\": \"redirect\", \"url\": \"\(http)/style.css\", \"to\": \"http://cdn.example.test:PORT/whoami\"}",
                        "\(http)/style.css") { result, _ in
            #expect(result.status == 0)
            #expect(result.standardOutput == "origin=cdn host=cdn.example.test:\(lab.httpPort)\n")
        }
    }

    @Test func rulesRedirectWithAStatusIsFollowedWithLocationOnly() async throws {
        let rule = "{\"action\": \"redirect\", \"url\": \"\(http)/style.css\", \"to\": \"http://cdn.example.test:PORT/whoami\", \"status\": 302}"
        try await fetch(rules: rule, "-L", "\(http)/style.css") { result, _ in
            #expect(result.status == 0)
            #expect(result.standardOutput == "origin=cdn host=cdn.example.test:\(lab.httpPort)\n")
        }
        try await fetch(rules: rule, "-i", "\(http)/style.css") { result, _ in
            #expect(result.status == 0)
            let (head, body) = try Self.split(result.standardOutput)
            #expect(head == ["HTTP/1.1 302 Found", "Content-Length: 0", "Location: http://cdn.example.test:\(lab.httpPort)/whoami"])
            #expect(body == "")
        }
    }

    /// curl has no code for a refusal by policy: 56, as curl exits when a proxy refuses its CONNECT.
    @Test func blockedHostExitsFiftySixNamingTheRule() async throws {
        try await fetch(rules: "{\"action\": \"block\", \"host\": \"ads.example.test\"}",
                        "https://ads.example.test:\(lab.httpsPort)/banner.js") { result, _ in
            #expect(result.status == 56)
            #expect(result.standardOutput == "")
            #expect(result.standardError
                == "hostpin: https://ads.example.test:\(lab.httpsPort)/banner.js is blocked by rules[0] (block host ads.example.test)\n")
        }
    }

    @Test func headerRuleReachesTheOrigin() async throws {
        try await fetch(rules: "{\"action\": \"header\", \"host\": \"*.example.test\", \"set\": {\"X-Client\": \"hostpin\"}}",
                        "\(http)/headers") { result, _ in
            #expect(result.status == 0)
            #expect(result.standardOutput.split(separator: "\n").contains("X-Client: hostpin"))
        }
    }

    /// nx.example.test is NXDOMAIN upstream (exit 6 without the rule); pinned, it reaches www.
    @Test func pinnedNameTheUpstreamsDoNotKnowReachesItsAddress() async throws {
        let url = "http://nx.example.test:\(lab.httpPort)/whoami"
        #expect(try await fetch(url).status == 6)
        try await fetch(rules: "{\"action\": \"pin\", \"host\": \"nx.example.test\", \"addresses\": [\"127.0.0.10\"]}", url) { result, _ in
            #expect(result.status == 0)
            #expect(result.standardOutput == "origin=www host=nx.example.test:\(lab.httpPort)\n")
        }
    }

    @Test func firstMatchingRuleWinsInFileOrder() async throws {
        let rules = """
            {"action": "respond", "url": "\(http)/logo.png", "body": "local"},
            {"action": "block", "host": "www.example.test", "path": "/*.png"}
            """
        try await fetch(rules: rules, "\(http)/logo.png") { result, _ in
            #expect(result.status == 0)
            #expect(result.standardOutput == "local")
        }
        try await fetch(rules: rules, "\(http)/other.png") { result, _ in
            #expect(result.status == 56)
            #expect(result.standardError.hasSuffix("is blocked by rules[1] (block host www.example.test path /*.png)\n"))
        }
        try await fetch(rules: rules, "\(http)/whoami") { result, _ in
            #expect(result.standardOutput == "origin=www host=www.example.test:\(lab.httpPort)\n")
        }
    }

    @Test func badRulesFileExitsTwoListingEveryProblem() async throws {
        let rules = """
            {"action": "blok", "host": "ads.example.test"},
            {"action": "redirect", "url": "http://a.example.test/", "to": "gopher://a.example.test/"},
            {"action": "pin", "host": "api.example.test", "addresses": ["api"]}
            """
        try await fetch(rules: rules, "\(http)/whoami") { result, folder in
            #expect(result.status == 2)
            #expect(result.standardOutput == "")
            #expect(result.standardError == "hostpin: error: invalid value for '--rules': \(folder)/rules.json has 3 errors: "
                + "rules[0].action: unknown action 'blok' (the actions are block, respond, redirect, pin, header and pass); "
                + "rules[1].to: 'gopher://a.example.test/' is not an http or https URL: a redirect must go to one; "
                + "rules[2].addresses[0]: 'api' is not an IPv4 or IPv6 address.\nSee 'hostpin fetch --help'.\n")
        }
    }

    @Test func missingRulesFileExitsTwo() async throws {
        let result = try await fetch("--rules", "/nonexistent/rules.json", "\(http)/whoami")
        #expect(result.status == 2)
        #expect(result.standardError == "hostpin: error: cannot read '/nonexistent/rules.json' for '--rules': it does not exist.\n"
            + "See 'hostpin fetch --help'.\n")
    }

    // MARK: Usage

    @Test(arguments: [
        (["http://bad..name/"], "'bad..name' is not a valid host name: it has an empty label (two dots in a row, or a leading dot)."),
        (["http://a b/"], "'http://a b/' is not a URL hostpin can fetch: it does not parse as a URL (RFC 3986)."),
        (["ftp://www.example.test/"],
         "'ftp://www.example.test/' is not a URL hostpin can fetch: the scheme 'ftp' is not supported (only http and https)."),
        (["http:///path"], "'http:///path' is not a URL hostpin can fetch: it has no host."),
        (["http://www.example.test:70000/"],
         "'http://www.example.test:70000/' is not a URL hostpin can fetch: the port 70000 is not from 1 to 65535."),
        ([String](), "missing argument URL (give the URL to fetch)."),
        (["http://www.example.test/", "http://cdn.example.test/"], "unexpected argument 'http://cdn.example.test/'."),
        (["http://www.example.test/", "-H", "no colon"], "invalid value for '-H': 'no colon' is not a header line 'Name: value'."),
        (["http://www.example.test/", "-X", "BAD METHOD"],
         "invalid value for '-X': 'BAD METHOD' is not an HTTP method (a token such as GET or PUT)."),
        (["http://www.example.test/", "--max-time", "soon"],
         "invalid value for '--max-time': 'soon' is not a number of seconds from 0.001 to 86400."),
        (["http://www.example.test/", "--ca-file", "/nonexistent/ca.pem"],
         "cannot read '/nonexistent/ca.pem' for '--ca-file': No such file or directory."),
        (["http://www.example.test/", "--data-binary", "@/nonexistent/body"],
         "cannot read '/nonexistent/body' for '--data-binary': No such file or directory."),
        (["http://www.example.test/", "-o"], "option '-o' needs a value."),
        (["http://www.example.test/", "--fail=yes"], "flag '--fail' takes no value."),
        (["http://www.example.test/", "--compressed"], "unknown option '--compressed'."),
    ])
    func badCommandLineExitsTwo(_ arguments: [String], _ message: String) async throws {
        let result = try await HostPinBinary.run(["fetch"] + arguments + ["--server", SilentUpstream.closedPort])
        #expect(result.status == 2)
        #expect(result.standardOutput == "")
        #expect(result.standardError == "hostpin: error: \(message)\nSee 'hostpin fetch --help'.\n")
    }

    @Test func helpExplainsRedirectRulesAndExitCodes() async throws {
        let result = try await HostPinBinary.run(["fetch", "--help"])
        #expect(result.status == 0)
        let help = result.standardOutput
        #expect(help.contains("USAGE: hostpin fetch URL "))
        for option in ["--server IP:PORT", "--family 4|6|any", "--timeout SECONDS", "--ca-file FILE", "-i, --include",
                       "-o, --output FILE", "-X, --request METHOD", "-d, --data DATA", "--data-binary DATA",
                       "-H, --header 'Name: value'", "-L, --location", "-f, --fail", "--max-time SECONDS", "--rules FILE"] {
            #expect(help.contains(option), "help lacks \(option)")
        }
        #expect(help.contains("URLSession's method rules"))
        #expect(help.contains("303 turns every method but HEAD"))
        #expect(help.contains("307 and 308 keep the method and the body"))
        #expect(help.contains("curl's -X sticks to every hop"))
        #expect(help.contains("Authorization and Cookie from -H go only to hops"))
        for code in ["  0  ", "  1  ", "  2  ", "  6  ", "  7  ", " 22  ", " 28  ", " 35  ", " 47  ", " 56  ", " 60  ", " 77  "] {
            #expect(help.contains("\n" + code), "help lacks exit code \(code)")
        }
        #expect(try await HostPinBinary.run(["help", "fetch"]).standardOutput == help)
        #expect(try await HostPinBinary.run(["fetch", "-h", "http://bad..name/"]).standardOutput == help)
    }

    // MARK: Helpers

    /// `-i` output split at the first empty line: the head's lines (CRLF ends, as curl prints them)
    /// and the body.
    static func split(_ output: String) throws -> (head: [String], body: String) {
        let separator = try #require(output.range(of: "\r\n\r\n"))
        let head = output[..<separator.lowerBound].components(separatedBy: "\r\n")
        return (head, String(output[separator.upperBound...]))
    }

    /// Runs `hostpin arguments…` and samples its peak resident set (`VmHWM`, which only grows) from
    /// /proc until it exits.
    static func peakResidentKiB(_ arguments: [String]) async throws -> (status: Int32, peakKiB: Int) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try HostPinBinary.path())
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["HOSTPIN_UPSTREAMS": ""]) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        var peak = 0
        while process.isRunning {
            if let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
               let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
               let kib = Int(line.dropFirst("VmHWM:".count).trimmingCharacters(in: .whitespaces).dropLast(3)
                                .trimmingCharacters(in: .whitespaces)) {
                peak = max(peak, kib)
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        process.waitUntilExit()
        return (process.terminationStatus, peak)
    }

    /// The SHA-256 of `data` in lower-case hex, from coreutils' `sha256sum` (no crypto library here).
    static func sha256(_ data: Data) async throws -> String {
        try await Scratch.with { folder in
            let path = folder + "/digest-input"
            try data.write(to: URL(fileURLWithPath: path))
            let result = try await ProcessRunner.run("/usr/bin/sha256sum", [path])
            return String(result.standardOutput.prefix(64))
        }
    }
}

/// `hostpin fetch` asking the hijacker on purpose: what a victim of the hijack sees. Its name matches
/// `HijackerOptIn`, the pattern `scripts/test` lets reach the hijacker.
@Suite struct FetchHijackerOptInTests {
    @Test func hijackedAnswerLandsOnTheHijacker() async throws {
        let lab = try Lab.current()
        let result = try await HostPinBinary.run(["fetch", "http://www.example.test:\(lab.httpPort)/whoami",
                                            "--server", "\(lab.hijackDNS)", "--timeout", "2", "--dnssec", "off"])  // it cannot sign
        #expect(result.status == 0)
        #expect(result.standardOutput == "origin=hijacker host=www.example.test:\(lab.httpPort)\n")
    }
}

/// A fresh temporary folder for one test, removed afterwards.
enum Scratch {
    static func with<T>(_ body: (String) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-fetch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        return try await body(folder.path)
    }
}
