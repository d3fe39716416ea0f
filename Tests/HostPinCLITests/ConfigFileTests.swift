import Foundation
import HostPinTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `--config FILE` and `hostpin check-config FILE`: every problem of a bad file at its key path, the
/// configuration in force, and every option on the command line winning over the file.
@Suite struct ConfigFileTests {
    let lab: Lab
    init() throws { lab = try Lab.current() }

    /// A temporary folder holding `files` (name → contents); removed by the caller.
    static func folder(_ files: [String: String]) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (name, contents) in files {
            try contents.write(to: folder.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        return folder
    }

    /// `hostpin check-config` on `contents`: its status, the JSON it printed (when 0), its error lines.
    private func check(_ contents: String) async throws -> (status: Int32, effective: [String: Any], errors: [String]) {
        let folder = try Self.folder(["config.json": contents])
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("config.json").path
        let result = try await HostPinBinary.run(["check-config", path])
        let effective = (try? JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8))) as? [String: Any] ?? [:]
        let errors = result.standardError.split(separator: "\n").map(String.init).filter { $0.hasPrefix("hostpin: error: ") }
            .map { String($0.dropFirst("hostpin: error: ".count)).replacingOccurrences(of: path, with: "FILE") }
        return (result.status, effective, errors)
    }

    // MARK: check-config

    @Test func anEmptyObjectGivesEveryDefault() async throws {
        let (status, effective, errors) = try await check("{}")
        #expect(status == 0 && errors.isEmpty, "\(errors)")
        let listeners = try #require(effective["listeners"] as? [String: Any])
        #expect(listeners["dns"] as? [String] == ["127.0.0.1:53"])
        #expect(listeners["proxy"] is NSNull && listeners["control"] is NSNull)
        let cache = try #require(effective["cache"] as? [String: Any])
        #expect(cache["maxEntries"] as? Int == 100_000 && cache["maxStale"] as? Int == 86_400 && cache["maxNegativeTTL"] as? Int == 900)
        #expect(cache["refreshAhead"] as? Double == 0.8)
        let upstreams = try #require(effective["upstreams"] as? [String: Any])
        #expect(upstreams["servers"] as? [String] == ["https://cloudflare-dns.com/dns-query", "https://dns.google/dns-query",
                                                      "https://dns.quad9.net/dns-query"])
        #expect((effective["rules"] as? [Any])?.isEmpty == true)
        #expect(Set(effective.keys) == ["upstreams", "resolution", "cache", "listeners", "dns", "watch", "proxy", "log", "routes",
                                        "rules", "network"])
        #expect((effective["routes"] as? [Any])?.isEmpty == true)
        #expect((effective["network"] as? [String: Any])?["noWatch"] as? Bool == false)
        #expect(cache["staleAnswerTimeout"] as? Double == 1.8)
        #expect(listeners["metrics"] is NSNull)
        let watch = try #require(effective["watch"] as? [String: Any])
        #expect(watch["local"] is NSNull && watch["hijackList"] is NSNull && watch["noProbe"] as? Bool == false)
        #expect(watch["interval"] as? Int == 1 && watch["nameInterval"] as? Int == 3600 && (watch["ordinary"] as? [Any])?.isEmpty == true)
        let log = try #require(effective["log"] as? [String: Any])
        #expect(log["level"] as? String == "info" && log["format"] as? String == "text" && log["accessLog"] is NSNull)
        // DNSSEC: the default mode (validate), the built-in anchors (null: no file), no insecure domain.
        let resolution = try #require(effective["resolution"] as? [String: Any])
        #expect(resolution["dnssec"] as? String == "validate")
        #expect(resolution["trustAnchors"] is NSNull)
        #expect((resolution["insecureDomains"] as? [Any])?.isEmpty == true)
    }

    /// The DNSSEC keys as given: the mode, each anchor file as it will be opened (read from the
    /// configuration file's folder), the insecure domains.
    @Test func dnssecKeysAreCheckedAndPrintedInForce() async throws {
        let anchor = ". IN DS 20326 8 2 E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC8D\n"
        let folder = try Self.folder([
            "config.json": #"{"resolution": {"dnssec": "report", "trustAnchors": ["root.ds", "keys/other.ds"], "insecureDomains": ["corp.test"]}}"#,
            "root.ds": anchor,
        ])
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("keys"), withIntermediateDirectories: true)
        try anchor.write(to: folder.appendingPathComponent("keys/other.ds"), atomically: true, encoding: .utf8)
        let result = try await HostPinBinary.run(["check-config", folder.appendingPathComponent("config.json").path])
        #expect(result.status == 0, "\(result.standardError)")
        let effective = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        let resolution = try #require(effective["resolution"] as? [String: Any])
        #expect(resolution["dnssec"] as? String == "report")
        #expect(resolution["trustAnchors"] as? [String] == [folder.appendingPathComponent("root.ds").path,
                                                          folder.appendingPathComponent("keys/other.ds").path])
        #expect(resolution["insecureDomains"] as? [String] == ["corp.test"])
        // The file's values are the command line's: lookup accepts them and resolves.
        let lookup = try await HostPinBinary.run(["lookup", "www.example.test", "--server", "\(lab.trustedDNS)", "--dnssec", "off",
                                                  "--config", folder.appendingPathComponent("config.json").path])
        #expect(lookup.status == 0, "\(lookup.standardError)")
        #expect(lookup.standardOutput == "www.example.test. 3600 IN A 127.0.0.10\n")
    }

    @Test func theFilesValuesAreInForceWithRelativePathsFromItsFolder() async throws {
        let (status, effective, errors) = try await check("""
            {"upstreams": {"servers": ["127.0.0.1:5300"]}, "resolution": {"timeout": 2.5},
             "cache": {"file": "cache.json", "maxStale": 60}, "listeners": {"dns": ["127.0.0.1:5353", "[::1]:5353"]}}
            """)
        #expect(status == 0 && errors.isEmpty, "\(errors)")
        let cache = try #require(effective["cache"] as? [String: Any])
        #expect((cache["file"] as? String)?.hasSuffix("/cache.json") == true && (cache["file"] as? String)?.hasPrefix("/") == true)
        #expect(cache["maxStale"] as? Int == 60)
        #expect((effective["resolution"] as? [String: Any])?["timeout"] as? Double == 2.5)
        #expect((effective["listeners"] as? [String: Any])?["dns"] as? [String] == ["127.0.0.1:5353", "[::1]:5353"])
    }

    /// The network section is a section like the others: `network.noWatch` is read from a file and
    /// printed in force (it was refused as an unknown top-level key).
    @Test func theNetworkSectionIsRead() async throws {
        let (status, effective, errors) = try await check(#"{"network": {"noWatch": true}}"#)
        #expect(status == 0 && errors.isEmpty, "\(errors)")
        #expect((effective["network"] as? [String: Any])?["noWatch"] as? Bool == true)
    }

    /// Each kind of bad file, and the lines it gets (FILE stands for its path).
    static let badFiles: [(String, [String])] = [
        ("", ["FILE is empty: a configuration file is a JSON object ({} for every default)"]),
        ("  \n", ["FILE is empty: a configuration file is a JSON object ({} for every default)"]),
        ("[1, 2]", ["FILE: (top level): must be an object, not an array"]),
        (#"{"upstreams": {"servers": "127.0.0.1"}}"#, ["FILE: upstreams.servers: must be an array of upstreams, not a string"]),
        (#"{"upstreams": {"servers": []}}"#, ["FILE: upstreams.servers: must not be empty (leave the key out for the default)"]),
        (#"{"cache": {"maxStale": 60}, "lisenters": {}}"#,
         ["FILE: lisenters: unknown key (this object takes upstreams, resolution, cache, listeners, dns, watch, proxy, log, network, routes, rules, comment)"]),
        (#"{"proxy": {"grace": 1, "maxConnection": 5}}"#,
         ["FILE: proxy.maxConnection: unknown key (this object takes allowPrivate, noAddressRanking, allowConnectPorts, maxConnections, grace, timeout, comment)"]),
        (#"{"upstreams": {"servers": ["127.0.0.1:5300", "8.8.8.8:99999", "ftp://x"]}}"#,
         ["FILE: upstreams.servers[1]: '8.8.8.8:99999' has no valid port (1-65535)",
          "FILE: upstreams.servers[2]: 'ftp://x' has an unsupported scheme: use https:// for DNS over HTTPS or tls:// for DNS over TLS"]),
        (#"{"upstreams": {"servers": ["tls://dns.example.test"]}}"#,
         ["FILE: upstreams.servers[0]: 'tls://dns.example.test' names its server by host name, and nothing says where dns.example.test is: "
          + "give upstreams.bootstrap.dns.example.test, or list a plain upstream (IP:PORT) to look it up through"]),
        (#"{"upstreams": {"servers": ["127.0.0.1"], "bootstrap": {"dns.exmaple.test": ["127.0.0.20"]}}}"#,
         ["FILE: upstreams.bootstrap.dns.exmaple.test: dns.exmaple.test is the name of no upstream in upstreams.servers "
          + "(none listed is named: plain ones are only addresses)"]),
        (#"{"listeners": {"dns": ["192.0.2.1:53"], "proxy": "127.0.0.1:99999"}, "dns": {"blockedAnswer": "zero"}}"#,
         ["FILE: listeners.proxy: '127.0.0.1:99999' is not IP:PORT (IPv6 as [IP]:PORT)",
          "FILE: dns.blockedAnswer: 'zero' is not nxdomain or unspecified",
          "FILE: listeners.dns[0]: 192.0.2.1:53 is not a loopback address; set listeners.allowRemote to true to let other hosts use it"]),
        (#"{"cache": {"maxStale": -1, "minTTL": 600, "maxTTL": 60, "refreshAhead": "0.5"}, "resolution": {"family": 4}}"#,
         ["FILE: resolution.family: must be a string, not a number",
          "FILE: cache.maxStale: -1 is not a whole number of seconds from 0 to 31536000",
          "FILE: cache.refreshAhead: must be a number, not a string",
          "FILE: cache.minTTL: 600 is above cache.maxTTL (60)"]),
        (#"{"upstreams": {"caFile": "missing.pem"}, "listeners": {"control": "run/control"}}"#,
         ["FILE: upstreams.caFile: cannot use 'DIR/missing.pem': No such file or directory",
          "FILE: listeners.control: 'run/control' is neither an absolute path nor a bare file name (placed in the runtime directory)"]),
        (#"{"rules": [{"action": "block", "hots": "ads.example.test"}, {"action": "pin", "host": "x.test", "addresses": ["nope"]}]}"#,
         ["FILE: rules[0].hots: unknown key (this rule takes action, comment, host, path, url and urlPrefix)",
          "FILE: rules[0]: the rule matches nothing: give host, url or urlPrefix",
          "FILE: rules[1].addresses[0]: 'nope' is not an IPv4 or IPv6 address"]),
        (#"{"log": {"level": "loud", "format": "xml", "accessLog": "/proc/sys/access.log"}, "cache": {"staleAnswerTimeout": 3601}}"#,
         ["FILE: cache.staleAnswerTimeout: 3601 is not a number of seconds from 0 to 3600",
          "FILE: log.level: 'loud' is not error, warning, info or debug",
          "FILE: log.format: 'xml' is not text or json",
          "FILE: log.accessLog: cannot use '/proc/sys/access.log': its folder /proc/sys is not writable: Permission denied"]),
        (#"{"resolution": {"dnssec": "strict", "trustAnchors": [".", "missing.ds"], "insecureDomains": ["a..b", "10.0.0.1"]}}"#,
         ["FILE: resolution.dnssec: 'strict' is not validate, report or off",
          "FILE: resolution.trustAnchors[0]: cannot use 'DIR': it is not a regular file (a directory, device, FIFO or socket)",
          "FILE: resolution.trustAnchors[1]: cannot use 'DIR/missing.ds': it does not exist",
          "FILE: resolution.insecureDomains[0]: 'a..b' is not a valid domain name: it has an empty label (two dots in a row, or a leading dot)",
          "FILE: resolution.insecureDomains[1]: '10.0.0.1' is an IP address, not a domain name"]),
        (#"{"resolution": {"dnssec": true, "trustAnchors": [], "insecureDomains": [5]}}"#,
         ["FILE: resolution.dnssec: must be a string, not a boolean",
          "FILE: resolution.trustAnchors: must not be empty (leave the key out for the default)",
          "FILE: resolution.insecureDomains[0]: must be a string, not a number"]),
        (#"{"network": {"noWatch": "yes"}}"#, ["FILE: network.noWatch: must be true or false, not a string"]),
        (#"{"watch": {"interval": 5, "ordinary": ["10.0.0.0/33"]}}"#,
         ["FILE: watch.ordinary[0]: '10.0.0.0/33' has a prefix length that is not a whole number from 0 to 32",
          "FILE: watch.interval: applies only with watch.local"]),
        (#"{"watch": {"local": "https://dns.example.test/dns-query", "hijackList": "missing.txt"}}"#,
         ["FILE: watch.local: 'https://dns.example.test/dns-query' is not a DNS server's IP[:PORT] (or true: the first nameserver of /etc/resolv.conf)",
          "FILE: watch.hijackList: cannot use 'DIR/missing.txt': it does not exist"]),
    ]

    @Test(arguments: badFiles.indices)
    func aBadFileListsEveryProblemAtItsKeyPath(_ index: Int) async throws {
        let (contents, expected) = Self.badFiles[index]
        let folder = try Self.folder(["config.json": contents])
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("config.json").path
        let result = try await HostPinBinary.run(["check-config", path])
        #expect(result.status == 2)
        #expect(result.standardOutput.isEmpty)
        let lines = result.standardError.split(separator: "\n").map(String.init)
        #expect(lines.last == "See 'hostpin check-config --help'.")
        let errors = lines.dropLast().map {
            $0.replacingOccurrences(of: "hostpin: error: ", with: "").replacingOccurrences(of: path, with: "FILE")
                .replacingOccurrences(of: folder.path, with: "DIR")
        }
        #expect(errors == expected)
    }

    @Test func notJSONAndUnreadableFilesAreRefused() async throws {
        let folder = try Self.folder(["config.json": #"{"cache": {"maxStale": }}"#])
        defer { try? FileManager.default.removeItem(at: folder) }
        let notJSON = try await HostPinBinary.run(["check-config", folder.appendingPathComponent("config.json").path])
        #expect(notJSON.status == 2)
        #expect(notJSON.standardError.contains("config.json is not JSON: "), "\(notJSON.standardError)")
        let missing = try await HostPinBinary.run(["check-config", folder.appendingPathComponent("none.json").path])
        #expect(missing.status == 2)
        #expect(missing.standardError.contains("cannot use the configuration file \(folder.path)/none.json: it does not exist"))
        let directory = try await HostPinBinary.run(["check-config", folder.path])
        #expect(directory.standardError.contains("it is not a regular file"))
    }

    @Test(.enabled(if: getuid() == 0, "needs root: a read-only file system in a mount namespace"))
    func aCacheFileInAReadOnlyFolderIsRefused() async throws {
        let folder = try Self.folder(["config.json": #"{"cache": {"file": "state/cache.json"}}"#])
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("state"), withIntermediateDirectories: true)
        let result = try await ProcessRunner.run("/usr/bin/unshare", [
            "--mount", "sh", "-c", "mount -t tmpfs -o ro tmpfs \"$1/state\" && exec \"$0\" check-config \"$1/config.json\"",
            try HostPinBinary.path(), folder.path,
        ])
        #expect(result.status == 2)
        #expect(result.standardError.contains("cache.file: cannot use '\(folder.path)/state/cache.json': its folder \(folder.path)/state "
                                              + "is not writable: Read-only file system"), "\(result.standardError)")
    }

    /// The shipped example is valid as it stands (its cache folder, which systemd's StateDirectory=
    /// creates, is made on a tmpfs in a mount namespace of the test's own) and is the one README.md shows.
    @Test(.enabled(if: getuid() == 0, "needs root: /var/lib/hostpin on a tmpfs in a mount namespace"))
    func theExampleConfigurationIsValidAndInTheReadme() async throws {
        let example = Lab.repositoryRoot.appendingPathComponent("examples/hostpin.json").path
        let result = try await ProcessRunner.run("/usr/bin/unshare", [
            "--mount", "sh", "-c", "mount -t tmpfs tmpfs /var/lib && mkdir /var/lib/hostpin && exec \"$0\" check-config \"$1\"",
            try HostPinBinary.path(), example,
        ])
        #expect(result.status == 0, "\(result.standardError)")
        let effective = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect((effective["listeners"] as? [String: Any])?["dns"] as? [String] == ["127.0.0.53:53"])
        #expect((effective["cache"] as? [String: Any])?["file"] as? String == "/var/lib/hostpin/cache.json")
        #expect((effective["rules"] as? [Any])?.count == 2)
        let readme = try String(contentsOf: Lab.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains("```json\n" + (try String(contentsOfFile: example, encoding: .utf8)) + "```"))
    }

    /// Every key of the schema is documented in README.md's table.
    @Test func everyKeyIsInTheReadme() async throws {
        let (_, effective, _) = try await check("{}")
        let readme = try String(contentsOf: Lab.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        var paths: [String] = ["rules"]
        for (section, value) in effective {
            guard let fields = value as? [String: Any] else { continue }
            paths += fields.keys.map { "\(section).\($0)" }
        }
        for path in paths { #expect(readme.contains("| `\(path)` |"), "README.md does not document \(path)") }
    }

    // MARK: The command line wins

    @Test func serversAndFamilyOnTheCommandLineWinOverTheFile() async throws {
        let folder = try Self.folder(["config.json": """
            {"upstreams": {"servers": ["127.0.0.1:1"]}, "resolution": {"family": "6", "timeout": 2}}
            """])
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("config.json").path
        // The file alone: its dead upstream.
        let fromFile = try await HostPinBinary.run(["lookup", "--config", config, "www.example.test"])
        #expect(fromFile.status == 3)
        #expect(fromFile.standardError.contains("127.0.0.1:1: connection refused"), "\(fromFile.standardError)")
        // --server replaces the file's whole list (the dead one is not asked: no error names it).
        let server = try await HostPinBinary.run(["lookup", "--config", config, "--server", lab.trustedDNS.description,
                                                  "v6only.example.test"])
        #expect(server.status == 0, "\(server.standardError)")
        #expect(server.standardOutput == "v6only.example.test. 3600 IN AAAA ::1\n; secure\n")  // the file's family 6
        let family = try await HostPinBinary.run(["lookup", "--config", config, "--server", lab.trustedDNS.description,
                                                  "--family", "4", "www.example.test"])
        #expect(family.standardOutput == "www.example.test. 3600 IN A 127.0.0.10\n; secure\n")
        // The file's upstreams win over HOSTPIN_UPSTREAMS.
        let environment = try await HostPinBinary.run(["lookup", "--config", config, "www.example.test"],
                                                      environment: ["HOSTPIN_UPSTREAMS": lab.trustedDNS.description])
        #expect(environment.status == 3)
    }

    @Test func rulesCacheListenersAndPreresolveOnTheCommandLineWinOverTheFile() async throws {
        let folder = try Self.folder([
            "config.json": """
                {"upstreams": {"servers": ["\(lab.trustedDNS)"]},
                 "cache": {"maxTTL": 100, "preresolve": ["www.example.test", "cdn.example.test"]},
                 "listeners": {"dns": ["127.0.0.1:0", "127.0.0.1:0"]},
                 "proxy": {"grace": 1, "maxConnections": 5},
                 "rules": [{"action": "block", "host": "www.example.test"}]}
                """,
            "none.json": #"{"rules": []}"#,
            "names": "alias.example.test\n",
        ])
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("config.json").path
        // The file alone; its proxy keys wait for a proxy (no --listen, no error).
        let fromFile = try await ServeProcess(["--config", config])
        defer { fromFile.kill() }
        #expect(fromFile.dnsAddresses.count == 2)
        #expect(fromFile.standardError.contains("pre-resolved 2 names\n"))
        let address = try #require(fromFile.dnsAddresses.first)
        #expect(try await Self.dig(address, "www.example.test").contains("status: NXDOMAIN"))
        // Cut to 100 (not the zone's 3600), counted down since the pre-resolve by however long a loaded
        // machine takes to get here: above the command line's 50 below, at most 100.
        let cut = try await Self.dig(address, "+noall", "+answer", "cdn.example.test")
        #expect((51...100).contains(Self.ttl(in: cut) ?? 0), "\(cut)")
        fromFile.kill()

        let flags = try await ServeProcess(["--config", config, "--rules", folder.appendingPathComponent("none.json").path,
                                            "--max-ttl", "50", "--dns-listen", "127.0.0.1:0",
                                            "--preresolve", folder.appendingPathComponent("names").path])
        defer { flags.kill() }
        #expect(flags.dnsAddresses.count == 1)
        #expect(flags.standardError.contains("pre-resolved 1 name\n"))
        let other = try #require(flags.dnsAddresses.first)
        #expect(try await Self.dig(other, "+short", "www.example.test") == "127.0.0.10\n")
        let flagged = try await Self.dig(other, "+noall", "+answer", "cdn.example.test")
        #expect((1...50).contains(Self.ttl(in: flagged) ?? 0), "\(flagged)")
    }

    @Test func logMetricsAndWatchOnTheCommandLineWinOverTheFile() async throws {
        // A TCP port in use for the file's metrics address: the file alone cannot start.
        let other = try await ServeProcess(["--dns-listen", "127.0.0.1:0", "--server", lab.trustedDNS.description])
        defer { other.kill() }
        let inUse = try #require(other.dnsAddresses.first)
        let folder = try Self.folder(["config.json": """
            {"upstreams": {"servers": ["\(lab.trustedDNS)"]}, "listeners": {"dns": ["127.0.0.1:0"], "metrics": "\(inUse)"},
             "log": {"format": "json", "level": "warning"}, "watch": {"local": "127.0.0.1:1", "interval": 0}}
            """])
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("config.json").path
        let fromFile = try await HostPinBinary.run(["serve", "--config", config])
        #expect(fromFile.status == 1)
        #expect(fromFile.standardError.contains(#""level":"error","message":"hostpin: --metrics-listen: cannot listen on \#(inUse)"#),
                "\(fromFile.standardError)")
        // Each option on the command line wins: text at info, its metrics address, its watched resolver.
        let flags = try await ServeProcess(["--config", config, "--log-format", "text", "--log-level", "info",
                                            "--metrics-listen", "127.0.0.1:0", "--watch-local", lab.trustedDNS2.description])
        defer { flags.kill() }
        #expect(flags.metricsAddress != nil && flags.metricsAddress != inUse)
        #expect(flags.standardError.hasPrefix("watching the local resolver \(lab.trustedDNS2) for hijacking: no overall limit, "),
                "\(flags.standardError)")
    }

    @Test func aProxyOptionOnTheCommandLineStillNeedsAProxy() async throws {
        let folder = try Self.folder(["config.json": #"{"listeners": {"dns": ["127.0.0.1:0"]}}"#])
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try await HostPinBinary.run(["serve", "--config", folder.appendingPathComponent("config.json").path,
                                                  "--server", lab.trustedDNS.description, "--grace", "1"])
        #expect(result.status == 2)
        #expect(result.standardError.contains("--grace applies to the proxy: add --listen IP:PORT to run it"))
    }

    @Test(.enabled(if: (try? Lab.current().dohURL) != nil, "the lab has no DoH server (LAB_DOH_URL)"))
    func bootstrapOnTheCommandLineWinsOverTheFile() async throws {
        let doh = try #require(lab.dohURL)
        let address = try #require(lab.dnsTLSAddress)
        let folder = try Self.folder(["config.json": """
            {"upstreams": {"servers": ["\(doh)"], "bootstrap": {"dns.example.test": ["127.0.0.99"]}, "caFile": "\(lab.caFile)"},
             "resolution": {"timeout": 2}}
            """])
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("config.json").path
        let fromFile = try await HostPinBinary.run(["lookup", "--config", config, "www.example.test"])
        #expect(fromFile.status == 3)
        let flag = try await HostPinBinary.run(["lookup", "--config", config, "--bootstrap", "dns.example.test=\(address)",
                                                "www.example.test"])
        #expect(flag.status == 0, "\(flag.standardError)")
        #expect(flag.standardOutput.hasPrefix("www.example.test. "))
    }

    @Test func serveRefusesABadFileListingEveryProblem() async throws {
        let folder = try Self.folder(["config.json": #"{"listeners": {"dns": ["nope"]}, "cache": {"maxStale": "1d"}}"#])
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("config.json").path
        let result = try await HostPinBinary.run(["serve", "--config", path, "--server", lab.trustedDNS.description])
        #expect(result.status == 2)
        #expect(result.standardError == """
            hostpin: error: \(path): cache.maxStale: must be a whole number, not a string
            hostpin: error: \(path): listeners.dns[0]: 'nope' is not IP:PORT (IPv6 as [IP]:PORT)
            See 'hostpin serve --help'.

            """)
    }

    @Test func theCacheClampOptionsAreCheckedAsTheirKeysAre() async throws {
        let conflict = try await HostPinBinary.run(["lookup", "--server", lab.trustedDNS.description, "--min-ttl", "600",
                                                    "--max-ttl", "60", "www.example.test"])
        #expect(conflict.status == 2)
        #expect(conflict.standardError.contains("hostpin: error: --min-ttl 600 is above --max-ttl 60."))
        let fraction = try await HostPinBinary.run(["serve", "--server", lab.trustedDNS.description, "--refresh-ahead", "1.5"])
        #expect(fraction.standardError.contains("invalid value for '--refresh-ahead': '1.5' is not a fraction from 0 to 1."))
        let size = try await HostPinBinary.run(["proxy", "--server", lab.trustedDNS.description, "--cache-size", "-1"])
        #expect(size.standardError.contains("invalid value for '--cache-size': '-1' is not a whole number from 0 to 10000000."))
    }

    /// The TTL of the first record of `dig +noall +answer` output.
    static func ttl(in answer: String) -> Int? {
        answer.split(separator: "\t").dropFirst().first.flatMap { Int($0) }
    }

    static func dig(_ server: String, _ arguments: String...) async throws -> String {
        let (address, port) = try #require(ServeProcess.split(server))
        return try await ProcessRunner.run("/usr/bin/dig", ["@\(address)", "-p", port, "+time=5", "+tries=1"] + arguments).standardOutput
    }
}
