import Foundation
import HostPinTestSupport
import Testing

/// `hostpin lookup --batch FILE|-` and `--concurrency N` against the lab's trusted NSD: names streamed
/// from a file or standard input, printed in input order, invalid lines reported without stopping the
/// batch, and a bound on resolutions in flight so thousands of names do not time out.
@Suite struct LookupBatchTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    /// 3000 names: every tenth `www.example.test`, the others `nN.example.test` (NXDOMAIN at the lab's NSD).
    static let manyNames = (1...3000).map { $0 % 10 == 0 ? "www.example.test" : "n\($0).example.test" }

    /// Writes `lines` to a fresh temporary file and passes its path to `body` (large inputs go through a
    /// file: `HostPinBinary.run` writes all of `input` before it reads the output).
    private func withFile<T>(_ text: String, _ body: (String) async throws -> T) async throws -> T {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-batch-\(UUID()).txt").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try await body(path)
    }

    private func jsonObjects(_ output: String) throws -> [[String: Any]] {
        try output.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    /// Every name answered in input order, NXDOMAIN for the `n…` names, an address for `www`; no timeout.
    private func expectEveryNameAnswered(_ result: ProcessRunner.Result, names: [String]) throws {
        #expect(result.status == 1)
        let objects = try jsonObjects(result.standardOutput)
        #expect(objects.count == names.count)
        #expect(objects.map { $0["name"] as? String } == names)
        for (name, object) in zip(names, objects) {
            if name == "www.example.test" {
                #expect(object["code"] == nil, "\(object)")
                #expect((object["addresses"] as? [[String: Any]])?.first?["address"] as? String == "127.0.0.10")
            } else {
                #expect(object["code"] as? String == "nxdomain", "\(object)")
            }
        }
        let errors = result.standardError.split(separator: "\n")
        #expect(errors.count == names.filter { $0 != "www.example.test" }.count)
        #expect(errors.allSatisfy { $0.hasSuffix(": NXDOMAIN (the name does not exist)") })
    }

    // --timeout 20 in the three tests below: each of thousands of names is validated (its NSEC denial's
    // signatures checked), 7-12 s for the whole batch alone; beside the main phase, 5 s per name ran out.
    @Test func threeThousandNamesFromAFileAreAllAnswered() async throws {
        try await withFile(Self.manyNames.joined(separator: "\n") + "\n") { path in
            let result = try await HostPinBinary.run(["lookup", "--batch", path, "--concurrency", "64", "--json",
                                                      "--server", "\(lab.trustedDNS)", "--timeout", "20"])
            try expectEveryNameAnswered(result, names: Self.manyNames)
        }
    }

    @Test func threeThousandNamesFromStandardInputAreAllAnswered() async throws {
        let result = try await HostPinBinary.run(["lookup", "--batch", "-", "--json", "--server", "\(lab.trustedDNS)",
                                                  "--timeout", "20"],
                                                 input: Self.manyNames.joined(separator: "\n"))
        try expectEveryNameAnswered(result, names: Self.manyNames)
    }

    @Test func fifteenHundredArgumentsAreAllAnsweredWithTheDefaultBound() async throws {
        let names = Array(Self.manyNames.prefix(1500))
        let result = try await HostPinBinary.run(["lookup", "--json", "--server", "\(lab.trustedDNS)", "--timeout", "20", "--"]
                                                 + names)
        try expectEveryNameAnswered(result, names: names)
    }

    @Test func blankLinesCommentsBlanksAndCRLFAreSkipped() async throws {
        let text = "# names\r\n\r\n  www.example.test  \r\n\t# indented comment\n\ncdn.example.test\n alias.example.test"
        try await withFile(text) { path in
            let result = try await HostPinBinary.run(["lookup", "--batch", path, "--server", "\(lab.trustedDNS)"])
            #expect(result.status == 0)
            #expect(result.standardError == "")
            #expect(result.standardOutput == """
                www.example.test. 3600 IN A 127.0.0.10
                ; secure
                cdn.example.test. 3600 IN A 127.0.0.11
                ; secure
                alias.example.test. 5 IN CNAME www.example.test.
                www.example.test. 3600 IN A 127.0.0.10
                ; secure

                """)
        }
    }

    @Test func invalidNameGetsItsErrorAndTheBatchGoesOn() async throws {
        let result = try await HostPinBinary.run(["lookup", "--batch", "-", "--server", "\(lab.trustedDNS)"],
                                                 input: "www.example.test\nbad..name\nnx.example.test\ncdn.example.test\n")
        #expect(result.status == 2)
        #expect(result.standardOutput == "www.example.test. 3600 IN A 127.0.0.10\n; secure\ncdn.example.test. 3600 IN A 127.0.0.11\n; secure\n")
        #expect(result.standardError == """
            hostpin: 'bad..name' is not a valid host name: it has an empty label (two dots in a row, or a leading dot)
            hostpin: nx.example.test: NXDOMAIN (the name does not exist)

            """)
    }

    @Test func invalidNameIsAJSONErrorObject() async throws {
        let result = try await HostPinBinary.run(["lookup", "--batch", "-", "--json", "--server", "\(lab.trustedDNS)"],
                                                 input: "bad..name\nwww.example.test\n")
        #expect(result.status == 2)
        let objects = try jsonObjects(result.standardOutput)
        #expect(objects.count == 2)
        #expect(objects.first?["name"] as? String == "bad..name")
        #expect(objects.first?["code"] as? String == "bad_name")
        #expect(objects.first?["source"] is NSNull)  // no server was asked
        #expect(objects.first?["error"] as? String
                    == "'bad..name' is not a valid host name: it has an empty label (two dots in a row, or a leading dot)")
        #expect(objects.last?["name"] as? String == "www.example.test")
    }

    @Test func upstreamFailureOutranksAnInvalidName() async throws {
        // REFUSED (3) wins over a bad line (2) and NXDOMAIN (1): the lab's fault server refuses
        // refused.fault.test and relays nx.example.test to the trusted NSD.
        let fault = try #require(lab.faultDNS, "the lab has no fault server (LAB_FAULT_DNS)")
        let result = try await HostPinBinary.run(["lookup", "--batch", "-", "--server", "\(fault)"],
                                                 input: "nx.example.test\nbad..name\nrefused.fault.test\n")
        #expect(result.status == 3)
    }

    @Test func overlongLineIsOneErrorAndTheBatchGoesOn() async throws {
        let long = String(repeating: "a", count: 100_000)
        let result = try await HostPinBinary.run(["lookup", "--batch", "-", "--server", "\(lab.trustedDNS)"],
                                                 input: "\(long)\nwww.example.test\n")
        #expect(result.status == 2)
        #expect(result.standardOutput == "www.example.test. 3600 IN A 127.0.0.10\n; secure\n")
        #expect(result.standardError == "hostpin: '\(String(repeating: "a", count: 40))…' is not a valid host name: "
                    + "it is 100000 octets long, more than 253\n")
    }

    @Test func concurrencyOneKeepsInputOrder() async throws {
        let result = try await HostPinBinary.run(["lookup", "--batch", "-", "--concurrency", "1", "--server", "\(lab.trustedDNS)"],
                                                 input: "cdn.example.test\nwww.example.test\ncdn.example.test\n")
        #expect(result.status == 0)
        #expect(result.standardOutput == """
            cdn.example.test. 3600 IN A 127.0.0.11
            ; secure
            www.example.test. 3600 IN A 127.0.0.10
            ; secure
            cdn.example.test. 3600 IN A 127.0.0.11
            ; secure

            """)
    }

    // MARK: Cache and single-flight (queries counted at an NSD of the test's own, so no other suite's
    // queries are counted and none of this suite's disturb theirs)

    /// The first address each name of the zone answers with (dual, multi and big have more).
    static let firstAddresses = [
        "www.example.test": "127.0.0.10", "cdn.example.test": "127.0.0.11", "dual.example.test": "127.0.0.10",
        "multi.example.test": "127.0.0.12", "v6only.example.test": "::1", "xn--bcher-kva.example.test": "127.0.0.10",
        "wrongcert.example.test": "127.0.0.66", "ns.example.test": "127.0.0.1", "big.example.test": "127.0.1.1",
        "alias.example.test": "127.0.0.10",
    ]

    @Test func twentyThousandLinesOfTenNamesAskEachNameOnce() async throws {
        let server = try await AuthoritativeServer()
        let names = Self.firstAddresses.keys.sorted()
        let lines = (0..<20_000).map { names[$0 % names.count] }
        let before = try await server.queries()
        let started = ContinuousClock.now
        let result = try await withFile(lines.joined(separator: "\n") + "\n") { path in
            try await HostPinBinary.run(["lookup", "--batch", path, "--json", "--server", "\(server.address)", "--dnssec", "off"])
        }
        let seconds = Int((ContinuousClock.now - started).components.seconds)
        let queries = try await server.queries() - before
        #expect(result.status == 0)
        #expect(result.standardError == "")
        let objects = try jsonObjects(result.standardOutput)
        #expect(objects.map { $0["name"] as? String } == lines)
        for object in objects {
            let name = object["name"] as? String ?? ""
            let addresses = (object["addresses"] as? [[String: Any]])?.compactMap { $0["address"] as? String } ?? []
            #expect(addresses.first == Self.firstAddresses[name], "\(object)")
        }
        // A and AAAA once per name, plus big's A again over TCP (truncated over UDP); alias (TTL 5) is
        // asked again (A and AAAA) each time its TTL runs out during the run, which on a loaded machine
        // lasts tens of seconds (33 queries seen against a bound of 25). Without the cache: 42 000.
        #expect((21...(25 + 2 * (seconds / 5 + 1))).contains(queries),
                "\(queries) queries for 20 000 lines naming 10 names in \(seconds) s")
    }

    @Test func aTTLOneNameIsAskedAgainOnlyOnceItHasExpired() async throws {
        let server = try await AuthoritativeServer()
        let before = try await server.queries()
        let clock = ContinuousClock()
        let start = clock.now
        let result = try await withFile(String(repeating: "short.example.test\n", count: 10_000)) { path in
            try await HostPinBinary.run(["lookup", "--batch", path, "--server", "\(server.address)", "--dnssec", "off"])
        }
        let elapsed = clock.now - start
        let queries = try await server.queries() - before
        #expect(result.status == 0)
        #expect(result.standardOutput == String(repeating: "short.example.test. 1 IN A 127.0.0.10\n", count: 10_000))
        // A and AAAA at the start and again each time the 1-second answer has expired. Without the cache: 20 000.
        let seconds = Int(elapsed.components.seconds)
        #expect(queries >= 2 && queries <= 2 * (seconds + 2), "\(queries) queries in \(elapsed)")
    }

    @Test func cacheSizeZeroAsksEveryRepeatAgain() async throws {
        let server = try await AuthoritativeServer()
        var counts: [String: Int] = [:]
        for cacheSize in ["0", "100000"] {
            let before = try await server.queries()
            // One at a time, so single-flight has nothing to join and only the cache saves queries.
            let result = try await HostPinBinary.run(["lookup", "--batch", "-", "--concurrency", "1", "--cache-size", cacheSize,
                                                      "--server", "\(server.address)", "--dnssec", "off"],
                                                     input: String(repeating: "www.example.test\n", count: 5))
            #expect(result.status == 0)
            #expect(result.standardOutput == String(repeating: "www.example.test. 3600 IN A 127.0.0.10\n", count: 5))
            counts[cacheSize] = try await server.queries() - before
        }
        #expect(counts == ["0": 10, "100000": 2])  // A and AAAA per resolution
    }

    /// Runs `body` with the address of a dnsmasq of its own that answers every name under `bulk.test`
    /// (A 127.0.0.10, AAAA ::1, TTL 3600): endless distinct names with cacheable answers.
    ///
    /// dnsmasq runs under a bash that waits for it: dnsmasq closes the descriptors it inherits, which
    /// Foundation's `Process` takes for its exit and then blocks in `waitpid`, stalling every other
    /// child's exit. Stopped by the PID it writes, with SIGKILL (children inherit the test process's
    /// blocked SIGTERM); bash then exits.
    private func withWildcardServer<T>(_ body: (String) async throws -> T) async throws -> T {
        let pidFile = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-dnsmasq-\(UUID()).pid").path
        defer { try? FileManager.default.removeItem(atPath: pidFile) }
        for _ in 0..<5 {
            let port = Int.random(in: 20_000...60_000)
            let address = "127.0.0.1:\(port)"
            let shell = Process()
            shell.executableURL = URL(fileURLWithPath: "/bin/bash")
            shell.arguments = ["-c", "/usr/sbin/dnsmasq \"$@\" & wait", "dnsmasq",
                               "--keep-in-foreground", "--conf-file=/dev/null", "--no-resolv", "--no-hosts",
                               "--bind-interfaces", "--listen-address=127.0.0.1", "--port=\(port)", "--user=root",
                               "--pid-file=\(pidFile)", "--address=/bulk.test/127.0.0.10", "--address=/bulk.test/::1",
                               "--local-ttl=3600"]
            shell.standardOutput = FileHandle.nullDevice
            shell.standardError = FileHandle.nullDevice
            try shell.run()
            func stop() async {
                if let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
                   let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                    kill(pid, SIGKILL)
                }
                while shell.isRunning { try? await Task.sleep(for: .milliseconds(10)) }
                try? FileManager.default.removeItem(atPath: pidFile)
            }
            var ready = false
            for _ in 0..<50 where shell.isRunning && !ready {
                ready = try await HostPinBinary.run(["lookup", "ready.bulk.test", "--timeout", "0.2", "--server", address,
                                                    "--dnssec", "off"])  // a dnsmasq of its own
                    .status == 0
            }
            guard ready else {
                await stop()  // the port was taken: try another
                continue
            }
            do {
                let result = try await body(address)
                await stop()
                return result
            } catch {
                await stop()
                throw error
            }
        }
        throw WildcardServerUnavailable()
    }

    private struct WildcardServerUnavailable: Error, CustomStringConvertible {
        var description: String { "dnsmasq did not answer on any of five random ports" }
    }

    @Test func endlessBatchRunsInBoundedMemory() async throws {
        func names(_ count: Int) -> String { (0..<count).map { "n\($0).bulk.test\n" }.joined() }
        try await withWildcardServer { server in
            // --timeout 1: each resolution's budget is held until it runs out, so a shorter one keeps
            // that part of memory small beside the cache's.
            let options = ["--family", "4", "--cache-size", "1000", "--timeout", "1", "--server", server, "--dnssec", "off"]
            let short = try await withFile(names(50_000)) { path in
                try await FetchCommandTests.peakResidentKiB(["lookup", "--batch", path] + options)
            }
            let long = try await withFile(names(200_000)) { path in
                try await FetchCommandTests.peakResidentKiB(["lookup", "--batch", path] + options)
            }
            #expect(short.status == 0)
            #expect(long.status == 0)
            // 150 000 more cached answers would take some 60 MiB.
            #expect(long.peakKiB - short.peakKiB < 16 * 1024,
                    "peak RSS \(long.peakKiB) KiB for 200 000 names vs \(short.peakKiB) KiB for 50 000")
        }
    }

    @Test func emptyBatchExitsZero() async throws {
        let result = try await HostPinBinary.run(["lookup", "--batch", "/dev/null", "--server", "\(lab.trustedDNS)"])
        #expect(result.status == 0)
        #expect(result.standardOutput == "")
        #expect(result.standardError == "")
    }

    @Test(arguments: [
        (["--batch", "/nonexistent/names"], "cannot read '/nonexistent/names' for '--batch': No such file or directory."),
        (["--batch", "/tmp"], "cannot read '/tmp' for '--batch': Is a directory."),
        (["--batch", "-", "www.example.test"],
         "names are given either as arguments or with --batch, not both ('www.example.test')."),
        (["www.example.test", "--concurrency", "0"],
         "invalid value for '--concurrency': '0' is not a whole number from 1 to 10000."),
        (["www.example.test", "--concurrency", "10001"],
         "invalid value for '--concurrency': '10001' is not a whole number from 1 to 10000."),
        (["www.example.test", "--concurrency", "many"],
         "invalid value for '--concurrency': 'many' is not a whole number from 1 to 10000."),
        (["--batch"], "option '--batch' needs a value."),
        (["www.example.test", "--cache-size", "-1"],
         "invalid value for '--cache-size': '-1' is not a whole number from 0 to 10000000."),
        (["www.example.test", "--cache-size", "10000001"],
         "invalid value for '--cache-size': '10000001' is not a whole number from 0 to 10000000."),
    ])
    func badBatchCommandLineIsAUsageError(_ arguments: [String], _ message: String) async throws {
        let result = try await HostPinBinary.run(["lookup"] + arguments + ["--server", SilentUpstream.closedPort])
        #expect(result.status == 2)
        #expect(result.standardOutput == "")
        #expect(result.standardError == "hostpin: error: \(message)\nSee 'hostpin lookup --help'.\n")
    }

    @Test(arguments: [("<&-", "Bad file descriptor"), ("< /tmp", "Is a directory"), ("0>/dev/null", "Bad file descriptor")])
    func unreadableStandardInputIsAUsageError(_ redirection: String, _ reason: String) async throws {
        let result = try await HostPinBinary.run(["lookup", "--batch", "-", "--server", SilentUpstream.closedPort],
                                                 bashSuffix: redirection)
        #expect(result.status == 2)
        #expect(result.standardError == "hostpin: error: cannot read standard input: \(reason).\nSee 'hostpin lookup --help'.\n")
    }

    @Test func helpDocumentsBatchConcurrencyAndOrder() async throws {
        let help = try await HostPinBinary.run(["lookup", "--help"]).standardOutput
        #expect(help.contains("--batch FILE|-"))
        #expect(help.contains("--concurrency N"))
        #expect(help.contains("(1-10000, default 64)"))
        #expect(help.contains("Names are printed in input order"))
        #expect(help.contains("--cache-size N"))
        #expect(help.contains("(0-10000000, default 100000)"))
    }
}
