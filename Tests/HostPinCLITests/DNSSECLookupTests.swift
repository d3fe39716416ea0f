import Foundation
import HostPinTestSupport
import Testing

/// `lookup`, `compare`, `fetch` and `proxy` validating against the signed lab (`LAB_SIGNED_DNS` with
/// `LAB_TRUST_ANCHOR`; zones/signed/README.md lists each name's verdict as delv gives it): the DNSSEC
/// line after the records, the JSON key, exit 3 for a bogus name in validate mode and 0 in report mode,
/// batch mode, the environment's anchor, the insecure domains, and a bogus name through the proxy.
@Suite struct DNSSECLookupTests {
    let lab: Lab
    let signed: String
    let anchor: String

    init() throws {
        lab = try Lab.current()
        signed = try #require(lab.signedDNS, "the lab has no signed server: restart it with scripts/lab down; scripts/lab up").description
        anchor = try #require(lab.trustAnchor)
    }

    /// `hostpin lookup names… --server <signed> --trust-anchor <lab's> --dnssec mode extra…`.
    private func lookup(_ names: [String], mode: String = "validate", _ extra: [String] = [], input: String? = nil,
                        environment: [String: String] = [:], anchored: Bool = true) async throws -> ProcessRunner.Result {
        try await HostPinBinary.run(["lookup"] + names + ["--server", signed, "--dnssec", mode, "--timeout", "5"]
                                        + (anchored ? ["--trust-anchor", anchor] : []) + extra,
                                    environment: environment, input: input)
    }

    /// Each stdout line parsed as a JSON object.
    private static func objects(_ result: ProcessRunner.Result) throws -> [[String: Any]] {
        try result.standardOutput.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    @Test func secureNameEndsWithTheSecureLine() async throws {
        let result = try await lookup(["www.example.test"])
        #expect(result.status == 0, "\(result.standardError)")
        // The TTL is the secure answer's, capped by its signatures (README "DNSSEC"): only the shape is fixed.
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.first?.hasPrefix("www.example.test. ") == true && lines.first?.hasSuffix(" IN A 127.0.0.10") == true, "\(lines)")
        #expect(lines.last == "; secure")
        #expect(result.standardError.isEmpty)
    }

    @Test func unsignedChildIsInsecureAndAnInsecureDomainToo() async throws {
        let unsigned = try await lookup(["www.unsigned.example.test"], ["--family", "4"])
        #expect(unsigned.status == 0, "\(unsigned.standardError)")
        #expect(unsigned.standardOutput.hasSuffix("\n; insecure\n"), "\(unsigned.standardOutput)")
        // A negative trust anchor: the bogus name is not validated, so it is insecure and handed out.
        let excused = try await lookup(["modified.example.test"], ["--family", "4", "--insecure-domain", "example.test"])
        #expect(excused.status == 0, "\(excused.standardError)")
        #expect(excused.standardOutput.hasSuffix("\n; insecure\n"), "\(excused.standardOutput)")
    }

    @Test func bogusNameIsExitThreeWithTheReason() async throws {
        let result = try await lookup(["modified.example.test"], ["--family", "4"])
        #expect(result.status == 3)
        #expect(result.standardOutput.isEmpty)
        #expect(result.standardError.hasPrefix("hostpin: modified.example.test: DNSSEC validation failed (bogus): modified.example.test."),
                "\(result.standardError)")
    }

    @Test func reportModePrintsTheBogusLineAndExitsZero() async throws {
        let result = try await lookup(["modified.example.test"], mode: "report", ["--family", "4"])
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.first == "modified.example.test. 3600 IN A 127.0.0.66", "\(lines)")
        #expect(lines.count == 2 && lines[1].hasPrefix("; bogus (report mode): modified.example.test."), "\(lines)")
    }

    @Test func offPrintsNoLineAndTheForgedAddress() async throws {
        let result = try await lookup(["modified.example.test"], mode: "off", ["--family", "4"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput == "modified.example.test. 3600 IN A 127.0.0.66\n")
    }

    @Test func jsonCarriesTheStatusAndTheReason() async throws {
        let validate = try Self.objects(try await lookup(["www.example.test", "modified.example.test", "nx.example.test"],
                                                         ["--json", "--family", "4"]))
        #expect(validate.count == 3)
        #expect(Set(validate[0].keys) == ["name", "addresses", "cnames", "dnssec", "ttl", "upstream", "source", "receivedAt"])
        #expect(validate[0]["dnssec"] as? String == "secure")
        #expect(validate[1]["code"] as? String == "dnssec_bogus")
        #expect(validate[1]["dnssec"] as? String == "bogus")
        #expect((validate[1]["dnssecReason"] as? String)?.hasPrefix("modified.example.test.") == true, "\(validate[1])")
        // A validated NXDOMAIN carries its denial's status.
        #expect(validate[2]["code"] as? String == "nxdomain")
        #expect(validate[2]["dnssec"] as? String == "secure", "\(validate[2])")
        let report = try Self.objects(try await lookup(["modified.example.test"], mode: "report", ["--json", "--family", "4"]))
        #expect(report.first?["dnssec"] as? String == "bogus")
        #expect((report.first?["dnssecReason"] as? String)?.isEmpty == false)
        #expect((report.first?["addresses"] as? [[String: Any]])?.first?["address"] as? String == "127.0.0.66")
    }

    /// Batch mode: each name's line in input order, the worst status.
    @Test func batchPrintsEachNamesLineInOrder() async throws {
        let result = try await lookup([], ["--batch", "-", "--family", "4"],
                                      input: "www.example.test\nmodified.example.test\nwww.unsigned.example.test\n")
        #expect(result.status == 3)
        let markers = result.standardOutput.split(separator: "\n").filter { $0.hasPrefix(";") }
        #expect(markers == ["; secure", "; insecure"], "\(result.standardOutput)")
        #expect(result.standardError.contains("hostpin: modified.example.test: DNSSEC validation failed (bogus)"))
    }

    @Test func environmentAnchorIsUsedWithoutAFlag() async throws {
        let result = try await lookup(["www.example.test"], environment: ["HOSTPIN_TRUST_ANCHOR": anchor], anchored: false)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.hasSuffix("; secure\n"))
    }

    /// The built-in anchors are the IANA root's, not the lab root's: the lab's names are bogus under them.
    /// (The lab's environment sets HOSTPIN_TRUST_ANCHOR to the lab root: `env -u` takes it away.)
    @Test func builtInAnchorsDoNotCoverTheLabRoot() async throws {
        let result = try await ProcessRunner.run("/usr/bin/env", ["-u", "HOSTPIN_TRUST_ANCHOR", try HostPinBinary.path(), "lookup",
                                                                  "www.example.test", "--server", signed, "--timeout", "5"])
        #expect(result.status == 3)
        #expect(result.standardError.contains("DNSSEC validation failed (bogus)"), "\(result.standardError)")
    }

    @Test func compareShowsTheStatusAndNamesTheReason() async throws {
        let secure = try await HostPinBinary.run(["compare", "www.example.test", "--server", signed, "--trust-anchor", anchor,
                                                  "--dnssec", "validate", "--local", "\(lab.trustedDNS)", "--family", "4",
                                                  "--no-probe", "--ordinary", "127.0.0.0/8"])
        #expect(secure.status == 0, "\(secure.standardError)")
        #expect(secure.standardOutput.contains("): 127.0.0.10 ; secure\n"), "\(secure.standardOutput)")
        let bogus = try await HostPinBinary.run(["compare", "modified.example.test", "--server", signed, "--trust-anchor", anchor,
                                                 "--dnssec", "validate", "--local", "\(lab.trustedDNS)", "--family", "4", "--no-probe"])
        #expect(bogus.status == 3)
        #expect(bogus.standardOutput.contains("DNSSEC validation failed (bogus): modified.example.test."), "\(bogus.standardOutput)")
        #expect(bogus.standardError.contains("hostpin: modified.example.test: DNSSEC validation failed (bogus)"))
    }

    @Test func fetchOfABogusNameIsSix() async throws {
        let result = try await HostPinBinary.run(["fetch", "http://modified.example.test:\(lab.httpPort)/whoami", "--server", signed,
                                                  "--trust-anchor", anchor, "--dnssec", "validate"])
        #expect(result.status == 6)
        #expect(result.standardError.contains("could not resolve host modified.example.test: DNSSEC validation failed (bogus)"),
                "\(result.standardError)")
    }

    /// `serve` validating: a bogus name is SERVFAIL, and the metrics count one verdict per answer received
    /// (the cache hit is not counted again).
    @Test func serveCountsEachVerdictOnce() async throws {
        let serve = try await ServeProcess(["--dns-listen", "127.0.0.1:0", "--server", signed, "--trust-anchor", anchor,
                                            "--dnssec", "validate", "--metrics-listen", "127.0.0.1:0"])
        defer { serve.kill() }
        let listen = try #require(serve.dnsAddresses.first)
        let (address, port) = try #require(ServeProcess.split(listen))
        func dig(_ name: String) async throws -> String {
            try await ProcessRunner.run("/usr/bin/dig", ["@\(address)", "-p", port, "+time=5", "+tries=1", name, "A"]).standardOutput
        }
        #expect(try await dig("www.example.test").contains("status: NOERROR"))
        #expect(try await dig("www.example.test").contains("status: NOERROR"))  // a cache hit
        #expect(try await dig("www.unsigned.example.test").contains("status: NOERROR"))
        #expect(try await dig("modified.example.test").contains("status: SERVFAIL"))
        let metrics = try #require(serve.metricsAddress)
        let scrape = try await ProcessRunner.run("/usr/bin/curl", ["-s", "--max-time", "20", "http://\(metrics)/metrics"]).standardOutput
        for line in [#"hostpin_dnssec_answers_total{status="secure"} 1"#, #"hostpin_dnssec_answers_total{status="insecure"} 1"#,
                     #"hostpin_dnssec_answers_total{status="indeterminate"} 0"#, #"hostpin_dnssec_answers_total{status="bogus"} 1"#] {
            #expect(scrape.contains(line + "\n"), "\(line) in \(scrape.split(separator: "\n").filter { $0.contains("dnssec") })")
        }
    }

    /// `hostpin serve` with dig, a real client: AD for `+adflag` and `+dnssec`, RRSIGs only with `+dnssec`
    /// (RFC 4035 §3.2.1), `+cd` answered unvalidated (the forged 127.0.0.66), a bogus name SERVFAIL with
    /// its Extended DNS Error (dig prints `EDE: 7 (Signature Expired)`), and the forwarded reply counted
    /// once in `hostpin_dnssec_answers_total` (its second asking is a forward-cache hit; CD is not counted).
    @Test func serveSetsADRelaysRRSIGsForDOAndSaysWhyBogus() async throws {
        let serve = try await ServeProcess(["--dns-listen", "127.0.0.1:0", "--server", signed, "--trust-anchor", anchor,
                                            "--dnssec", "validate", "--metrics-listen", "127.0.0.1:0"])
        defer { serve.kill() }
        let listen = try #require(serve.dnsAddresses.first)
        let (address, port) = try #require(ServeProcess.split(listen))
        func dig(_ arguments: String...) async throws -> String {
            try await ProcessRunner.run("/usr/bin/dig", ["@\(address)", "-p", port, "+time=5", "+tries=1"] + arguments).standardOutput
        }
        let ad = try await dig("+adflag", "www.example.test", "A")
        #expect(ad.contains("flags: qr rd ra ad;") && ad.contains("127.0.0.10") && !ad.contains("RRSIG"), "\(ad)")
        let signedTXT = try await dig("+dnssec", "info.example.test", "TXT")
        #expect(signedTXT.contains(" ad;") && signedTXT.contains("RRSIG\tTXT"), "\(signedTXT)")
        let plainTXT = try await dig("+noadflag", "info.example.test", "TXT")
        #expect(plainTXT.contains("hostpin lab") && !plainTXT.contains("RRSIG") && !plainTXT.contains(" ad;"), "\(plainTXT)")
        let cd = try await dig("+cd", "modified.example.test", "A")
        #expect(cd.contains("status: NOERROR") && cd.contains("127.0.0.66") && !cd.contains(" ad;"), "\(cd)")
        let bogus = try await dig("www.expired.example.test", "A")
        #expect(bogus.contains("status: SERVFAIL") && bogus.contains("EDE: 7 (Signature Expired)"), "\(bogus)")
        let metrics = try #require(serve.metricsAddress)
        let scrape = try await ProcessRunner.run("/usr/bin/curl", ["-s", "--max-time", "20", "http://\(metrics)/metrics"]).standardOutput
        for line in [#"hostpin_dnssec_answers_total{status="secure"} 2"#, #"hostpin_dnssec_answers_total{status="bogus"} 1"#] {
            #expect(scrape.contains(line + "\n"), "\(line) in \(scrape.split(separator: "\n").filter { $0.contains("dnssec") })")
        }
    }

    /// Through the proxy: 502 with the reason, in the body and the access log.
    @Test func proxyAnswersABogusName502WithTheReasonInTheAccessLog() async throws {
        let logPath = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-dnssec-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: logPath) }
        let proxy = try await RunningProxy(["--server", signed, "--trust-anchor", anchor, "--dnssec", "validate",
                                            "--access-log", logPath])
        let curl = try await ProcessRunner.run("/usr/bin/curl", ["-s", "--max-time", "20", "-x", "http://\(proxy.address)", "-w", "%{http_code}",
                                                               "http://modified.example.test:\(lab.httpPort)/whoami"])
        #expect(curl.standardOutput.hasPrefix("modified.example.test could not be resolved through the trusted upstreams: "
                                              + "DNSSEC validation failed (bogus): modified.example.test."), "\(curl.standardOutput)")
        #expect(curl.standardOutput.hasSuffix("502"))
        var line = ""
        for _ in 0..<250 where line.isEmpty {
            line = ((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "").split(separator: "\n").first.map(String.init) ?? ""
            if line.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(line.contains(" 502 0 ") && line.contains(" - - \"DNSSEC validation failed (bogus): modified.example.test."), "\(line)")
    }
}
