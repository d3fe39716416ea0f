import Foundation
import HostPin
import HostPinProxy
import HostPinTestSupport
import Testing

/// Interception rules applied by the proxy: every action on plain HTTP (curl and raw sockets through an
/// embedded proxy, the lab's origins behind it), and the host-level ones on CONNECT.
@Suite struct ProxyRulesTests {
    let lab: Lab

    init() throws {
        lab = try Lab.current()
    }

    /// Loads `rules` (the members of the `rules` array; `PORT` and `TLSPORT` stand for the lab's HTTP and
    /// HTTPS ports) with `files` beside them.
    private func load(_ rules: String, files: [String: Data] = [:]) throws -> Rules {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-proxy-rules-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for (name, data) in files { try data.write(to: folder.appendingPathComponent(name)) }
        let json = rules.replacingOccurrences(of: "TLSPORT", with: "\(lab.httpsPort)")
            .replacingOccurrences(of: "PORT", with: "\(lab.httpPort)")
        let file = folder.appendingPathComponent("rules.json")
        try Data("{\"rules\": [\(json)]}".utf8).write(to: file)
        return try Rules(contentsOf: file)
    }

    /// Runs `body` with a proxy applying `rules`, resolving through a resolver of its own that counts
    /// the names asked (over the lab's trusted NSD), CONNECT allowed to the lab's HTTPS port too.
    private func withRules(
        _ rules: String, files: [String: Data] = [:], allowPrivate: Bool = true,
        _ body: (_ proxy: String, _ resolver: CountingResolver, _ log: AccessLogRecorder, _ rules: Rules) async throws -> Void
    ) async throws {
        let loaded = try load(rules, files: files)
        let resolver = CountingResolver(try #require(ProxyLab.resolver))
        let httpsPort = lab.httpsPort
        try await ProxyLab.withProxy({
            $0.rules = loaded
            $0.allowedConnectPorts.insert(httpsPort)
        }, allowPrivate: allowPrivate, resolver: resolver) { proxy, _, log in
            try await body("http://\(proxy)", resolver, log, loaded)
        }
    }

    private func http(_ host: String, _ path: String) -> String { ProxyLab.http(lab, host, path) }
    private func https(_ host: String, _ path: String) -> String { "https://\(host):\(lab.httpsPort)\(path)" }

    /// The lines of a `/headers` answer, lower-cased.
    private static func lines(_ text: String) -> [String] {
        text.split(separator: "\n").map { $0.lowercased() }
    }

    // MARK: Plain HTTP

    @Test func blockIsAnswered403NamingTheRuleAndLogged() async throws {
        try await withRules(#"{"action": "block", "host": "*.ads.example.test"}"#) { proxy, resolver, log, _ in
            let result = try await ProxyLab.curl(["-x", proxy, "-w", "%{http_code}", http("banner.ads.example.test", "/whoami")])
            #expect(result.standardOutput == "Blocked by rules[0] (block host *.ads.example.test).\n403")
            let entry = try #require(await log.waitFor(1).first)
            #expect(entry.status == 403)
            #expect(entry.rules.map(\.keyPath) == ["rules[0]"])
            #expect(entry.pinned == nil)
            #expect(entry.source == nil)
            #expect(entry.description.hasSuffix(" 403 0 \(entry.description.split(separator: " ")[7]) rules[0] -"))
            #expect(resolver.count("banner.ads.example.test") == 0)
        }
    }

    @Test func respondAnswersFromAFileWithoutAskingTheOrigin() async throws {
        let image = Data((0..<70_000).map { _ in UInt8.random(in: 0...255) })
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-proxy-logo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: output) }
        let url = http("www.example.test", "/logo.png")
        try await withRules(#"{"action": "respond", "url": "http://www.example.test:PORT/logo.png", "file": "logo.png"}"#,
                            files: ["logo.png": image]) { proxy, resolver, log, _ in
            let result = try await ProxyLab.curl(["-x", proxy, "-D", "/dev/stderr", "-o", output.path, url])
            #expect(result.status == 0, "\(result.standardError)")
            #expect(try Data(contentsOf: output) == image)
            let head = result.standardError.lowercased()
            #expect(head.hasPrefix("http/1.1 200 ok\r\n"))
            #expect(head.contains("\r\ncontent-type: image/png\r\n"))
            #expect(head.contains("\r\ncontent-length: 70000\r\n"))
            #expect(head.contains("\r\nvia: 1.1 hostpin\r\n"))
            // HEAD: the same head, no body.
            let headOnly = try await ProxyLab.curl(["-x", proxy, "-I", url])
            #expect(headOnly.standardOutput.lowercased().contains("\r\ncontent-length: 70000\r\n"))
            #expect(headOnly.standardOutput.hasSuffix("\r\n\r\n"))
            // The connection stays open for the next request.
            let twice = try await ProxyLab.curl(["-x", proxy, "-o", "/dev/null", "-o", "/dev/null", "-w", "[%{num_connects}]", url, url])
            #expect(twice.standardOutput == "[1][0]")
            #expect(resolver.count("www.example.test") == 0)
            let entry = try #require(await log.waitFor(1).first)
            #expect(entry.status == 200)
            #expect(entry.bytes == 70_000)
            #expect(entry.pinned == nil)
            #expect(entry.rules.map(\.keyPath) == ["rules[0]"])
        }
        // The origin itself has no such file: the bytes came from the rule.
        try await ProxyLab.withProxy { proxy, _, _ in
            let plain = try await ProxyLab.curl(["-x", "http://\(proxy)", "-o", "/dev/null", "-w", "%{http_code}", url])
            #expect(plain.standardOutput == "404")
        }
    }

    @Test func redirectWithAStatusIsAnsweredWithLocation() async throws {
        let rule = """
            {"action": "redirect", "url": "http://www.example.test:PORT/style.css", "to": "http://cdn.example.test:PORT/whoami", "status": 302}
            """
        try await withRules(rule) { proxy, resolver, log, _ in
            let result = try await ProxyLab.curl(["-x", proxy, "-D", "-", "-o", "/dev/null", http("www.example.test", "/style.css")])
            let lines = result.standardOutput.components(separatedBy: "\r\n")
            #expect(lines.first == "HTTP/1.1 302 Found")
            #expect(lines.contains("Location: \(http("cdn.example.test", "/whoami"))"))
            #expect(lines.contains("Content-Length: 0"))
            let entry = try #require(await log.waitFor(1).first)
            #expect(entry.status == 302)
            #expect(entry.rules.map(\.keyPath) == ["rules[0]"])
            #expect(resolver.count("www.example.test") == 0)
            let followed = try await ProxyLab.curl(["-x", proxy, "-L", http("www.example.test", "/style.css")])
            #expect(followed.standardOutput == "origin=cdn host=cdn.example.test:\(lab.httpPort)\n")
        }
    }

    /// The client keeps its URL and gets the target's response, sent to the target's own pinned address
    /// with the target's `Host`; a `urlPrefix` keeps the rest of the path.
    @Test func transparentRedirectRelaysTheTargetsResponse() async throws {
        let rules = """
            {"action": "redirect", "url": "http://www.example.test:PORT/style.css", "to": "http://cdn.example.test:PORT/whoami"},
            {"action": "redirect", "urlPrefix": "http://www.example.test:PORT/old/", "to": "http://cdn.example.test:PORT/"}
            """
        try await withRules(rules) { proxy, _, log, _ in
            let url = http("www.example.test", "/style.css")
            let result = try await ProxyLab.curl(["-x", proxy, "-w", "%{http_code}", url])
            #expect(result.standardOutput == "origin=cdn host=cdn.example.test:\(lab.httpPort)\n200")
            let entry = try #require(await log.waitFor(1).first)
            #expect(entry.target == url)
            #expect(entry.pinned?.description == "127.0.0.11:\(lab.httpPort)")
            #expect(entry.rules.map(\.keyPath) == ["rules[0]"])
            let prefixed = try await ProxyLab.curl(["-x", proxy, http("www.example.test", "/old/whoami")])
            #expect(prefixed.standardOutput == "origin=cdn host=cdn.example.test:\(lab.httpPort)\n")
        }
    }

    @Test func transparentRedirectToHTTPSIs502() async throws {
        let rule = """
            {"action": "redirect", "url": "http://www.example.test:PORT/secure", "to": "https://cdn.example.test:TLSPORT/whoami"}
            """
        try await withRules(rule) { proxy, _, _, rules in
            let result = try await ProxyLab.curl(["-x", proxy, "-w", "%{http_code}", http("www.example.test", "/secure")])
            #expect(result.standardOutput == "\(rules.references[0]) redirects to \(https("cdn.example.test", "/whoami")), which "
                + "this proxy cannot fetch: it forwards plain http only (a status in the rule redirects the client instead).\n502")
        }
    }

    /// Loops the load-time check cannot see (it follows one example URL per rule: /ax and /xz here,
    /// which lead nowhere) end after 16 redirects, before any resolution.
    @Test func transparentRedirectLoopIs502() async throws {
        let rules = """
            {"action": "redirect", "host": "a.example.test", "path": "/a*", "to": "b.example.test"},
            {"action": "redirect", "host": "b.example.test", "path": "*z", "to": "a.example.test"}
            """
        try await withRules(rules) { proxy, resolver, _, rules in
            let result = try await ProxyLab.curl(["-x", proxy, "-w", "%{http_code}", http("a.example.test", "/az")])
            #expect(result.standardOutput == "The rules redirected the request more than 16 times (last by \(rules.references[0])).\n502")
            #expect(resolver.count("a.example.test") + resolver.count("b.example.test") == 0)
        }
    }

    /// nx.example.test does not exist upstream (NXDOMAIN): pinned, it reaches www's address without any
    /// query — even with private targets refused, since the pin is the operator's, not DNS's.
    @Test func pinSendsANameToItsAddressesWithoutADNSQuery() async throws {
        try await withRules(#"{"action": "pin", "host": "nx.example.test", "addresses": ["127.0.0.10"]}"#,
                            allowPrivate: false) { proxy, resolver, log, _ in
            let result = try await ProxyLab.curl(["-x", proxy, http("nx.example.test", "/whoami")])
            #expect(result.standardOutput == "origin=www host=nx.example.test:\(lab.httpPort)\n")
            #expect(resolver.count("nx.example.test") == 0)
            let entry = try #require(await log.waitFor(1).first)
            #expect(entry.pinned?.description == "127.0.0.10:\(lab.httpPort)")
            #expect(entry.source == .pinnedByRule)
            #expect(entry.description.hasSuffix(" rules[0] pin"))
            // A name DNS resolves to loopback is still refused.
            let resolved = try await ProxyLab.curl(["-x", proxy, "-o", "/dev/null", "-w", "%{http_code}", http("www.example.test", "/whoami")])
            #expect(resolved.standardOutput == "403")
        }
    }

    /// The origin receives exactly this head: the rules' edits in order, and a hop-by-hop field a rule
    /// tried to add removed again.
    @Test func headerRulesEditTheForwardedHead() async throws {
        let origin = try TestSockets.scriptedOrigin(response: Array("HTTP/1.1 204 No Content\r\n\r\n".utf8))
        let rules = """
            {"action": "pin", "host": "raw.example.test", "addresses": ["127.0.0.1"]},
            {"action": "header", "host": "raw.example.test", "set": {"X-Client": "hostpin"}, "add": {"X-Tag": ["a", "b"]},
             "remove": ["X-Secret"]},
            {"action": "header", "host": "*.example.test", "set": {"Keep-Alive": "timeout=1"}}
            """
        try await withRules(rules) { proxy, _, _, _ in
            let address = try #require(SocketAddress(String(proxy.dropFirst("http://".count))))
            let target = "http://raw.example.test:\(origin.port)/h"
            let request = "GET \(target) HTTP/1.1\r\nHost: raw.example.test:\(origin.port)\r\nX-Secret: s\r\nX-App: kept\r\n"
                + "Connection: close\r\n\r\n"
            let reply = try await TestSockets.exchange(address, Array(request.utf8))
            // Without the pin nothing reaches the origin, whose request would never come: stop here then.
            try #require(reply.hasPrefix("HTTP/1.1 204 No Content\r\n"), "\(reply)")
            #expect(try await origin.request.value == "GET /h HTTP/1.1\r\nHost: raw.example.test:\(origin.port)\r\nX-App: kept\r\n"
                + "X-Client: hostpin\r\nX-Tag: a\r\nX-Tag: b\r\nVia: 1.1 hostpin\r\nConnection: close\r\n\r\n")
        }
    }

    /// An edit is decided for the request's own URL: it never follows a transparent redirect to another
    /// host, and never reaches a host its rule does not name.
    @Test func headerEditsStayWithTheirHost() async throws {
        let rules = """
            {"action": "redirect", "url": "http://www.example.test:PORT/hop", "to": "http://cdn.example.test:PORT/headers"},
            {"action": "header", "host": "www.example.test", "set": {"X-Client": "hostpin"}, "remove": ["X-Secret"]}
            """
        try await withRules(rules) { proxy, _, _, _ in
            let own = try await ProxyLab.curl(["-x", proxy, "-H", "X-Secret: s", http("www.example.test", "/headers")])
            #expect(Self.lines(own.standardOutput).contains("x-client: hostpin"))
            #expect(!Self.lines(own.standardOutput).contains { $0.hasPrefix("x-secret:") })
            let hopped = try await ProxyLab.curl(["-x", proxy, "-H", "X-Secret: s", http("www.example.test", "/hop")])
            let lines = Self.lines(hopped.standardOutput)
            #expect(lines.contains("host: cdn.example.test:\(lab.httpPort)"))
            #expect(lines.contains("x-secret: s"))
            #expect(!lines.contains { $0.hasPrefix("x-client:") }, "\(lines)")
        }
    }

    @Test func firstMatchingRuleWins() async throws {
        let rules = """
            {"action": "respond", "url": "http://www.example.test:PORT/logo.png", "body": "local"},
            {"action": "block", "host": "www.example.test", "path": "/*.png"},
            {"action": "header", "host": "www.example.test", "set": {"X-Rule": "3"}}
            """
        try await withRules(rules) { proxy, _, _, _ in
            let local = try await ProxyLab.curl(["-x", proxy, http("www.example.test", "/logo.png")])
            #expect(local.standardOutput == "local")
            let blocked = try await ProxyLab.curl(["-x", proxy, "-w", "%{http_code}", http("www.example.test", "/other.png")])
            #expect(blocked.standardOutput == "Blocked by rules[1] (block host www.example.test path /*.png).\n403")
            let edited = try await ProxyLab.curl(["-x", proxy, http("www.example.test", "/headers")])
            #expect(Self.lines(edited.standardOutput).contains("x-rule: 3"))
        }
    }

    /// A pass rule cannot hand the request to the system's resolver, which the proxy never asks: the
    /// host is resolved through the trusted upstreams, and no header rule edits it.
    @Test func passForwardsThroughTheTrustedResolverUnedited() async throws {
        let rules = """
            {"action": "pass", "host": "www.example.test"},
            {"action": "header", "host": "*.example.test", "set": {"X-Client": "hostpin"}}
            """
        try await withRules(rules) { proxy, resolver, log, _ in
            let passed = try await ProxyLab.curl(["-x", proxy, http("www.example.test", "/headers")])
            let lines = Self.lines(passed.standardOutput)
            #expect(lines.contains("host: www.example.test:\(lab.httpPort)"))
            #expect(!lines.contains { $0.hasPrefix("x-client:") }, "\(lines)")
            #expect(resolver.count("www.example.test") == 1)
            let entry = try #require(await log.waitFor(1).first)
            #expect(entry.rules.map(\.keyPath) == ["rules[0]"])
            #expect(entry.pinned?.description == "127.0.0.10:\(lab.httpPort)")
            #expect(entry.source == .resolved(.upstream) || entry.source == .resolved(.cache))
            let other = try await ProxyLab.curl(["-x", proxy, http("cdn.example.test", "/headers")])
            #expect(Self.lines(other.standardOutput).contains("x-client: hostpin"))
        }
    }

    // MARK: CONNECT

    @Test func connectToABlockedHostIs403() async throws {
        try await withRules(#"{"action": "block", "host": "www.example.test"}"#) { proxy, resolver, log, _ in
            let address = try #require(SocketAddress(String(proxy.dropFirst("http://".count))))
            let reply = try await TestSockets.exchange(address, Array("CONNECT www.example.test:443 HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            #expect(RefusalTests.statusAndBody(reply) == ("HTTP/1.1 403 Forbidden", "Blocked by rules[0] (block host www.example.test).\n"))
            let entry = try #require(await log.waitFor(1).first)
            #expect(entry.method == "CONNECT")
            #expect(entry.rules.map(\.keyPath) == ["rules[0]"])
            #expect(resolver.count("www.example.test") == 0)
        }
    }

    /// cdn.example.test pinned to www's address: the tunnel goes there with no query, and curl verifies
    /// the certificate for the name it asked for through it.
    @Test func connectToAPinnedHostTunnelsToThePinnedAddress() async throws {
        try await withRules(#"{"action": "pin", "host": "cdn.example.test", "addresses": ["127.0.0.10"]}"#) { proxy, resolver, log, _ in
            let result = try await ProxyLab.curl(["--proxy", proxy, "--cacert", lab.caFile, https("cdn.example.test", "/whoami")])
            #expect(result.status == 0, "\(result.standardError)")
            #expect(result.standardOutput == "origin=www host=cdn.example.test:\(lab.httpsPort)\n")
            #expect(resolver.count("cdn.example.test") == 0)
            let entry = try #require(await log.waitFor(1).first)
            #expect(entry.method == "CONNECT")
            #expect(entry.pinned?.description == "127.0.0.10:\(lab.httpsPort)")
            #expect(entry.source == .pinnedByRule)
        }
    }

    /// `pass` applies to CONNECT as to plain HTTP: the tunnel's host is resolved through the trusted
    /// upstreams as if no rule matched (the proxy never asks the system's resolver), and the log names the rule.
    @Test func connectToAPassedHostTunnelsToItsTrustedAddress() async throws {
        try await withRules(#"{"action": "pass", "host": "www.example.test"}"#) { proxy, resolver, log, _ in
            let result = try await ProxyLab.curl(["--proxy", proxy, "--cacert", lab.caFile, https("www.example.test", "/whoami")])
            #expect(result.status == 0, "\(result.standardError)")
            #expect(result.standardOutput == "origin=www host=www.example.test:\(lab.httpsPort)\n")
            #expect(resolver.count("www.example.test") == 1)
            let entry = try #require(await log.waitFor(1).first)
            #expect(entry.method == "CONNECT")
            #expect(entry.rules.map(\.keyPath) == ["rules[0]"])
            #expect(entry.pinned?.description == "127.0.0.10:\(lab.httpsPort)")
            #expect(entry.source == .resolved(.upstream) || entry.source == .resolved(.cache))
        }
    }

    /// A redirect of a whole host moves the tunnel to the target's address; TLS still checks the name
    /// asked for (the lab certificate holds both).
    @Test func connectToARedirectedHostTunnelsToTheTarget() async throws {
        try await withRules(#"{"action": "redirect", "host": "cdn.example.test", "to": "www.example.test"}"#) { proxy, _, log, _ in
            let result = try await ProxyLab.curl(["--proxy", proxy, "--cacert", lab.caFile, https("cdn.example.test", "/whoami")])
            #expect(result.standardOutput == "origin=www host=cdn.example.test:\(lab.httpsPort)\n")
            let entry = try #require(await log.waitFor(1).first)
            #expect(entry.pinned?.description == "127.0.0.10:\(lab.httpsPort)")
            #expect(entry.rules.map(\.keyPath) == ["rules[0]"])
        }
    }

    /// The URL of a tunnelled request is inside TLS: rules about URLs, paths and header fields do not
    /// apply to CONNECT.
    @Test func urlLevelRulesDoNotApplyToConnect() async throws {
        let rules = """
            {"action": "block", "url": "https://www.example.test:TLSPORT/whoami"},
            {"action": "block", "host": "www.example.test", "path": "/headers"},
            {"action": "header", "host": "www.example.test", "set": {"X-Client": "hostpin"}}
            """
        try await withRules(rules) { proxy, _, log, _ in
            let result = try await ProxyLab.curl(["--proxy", proxy, "--cacert", lab.caFile, https("www.example.test", "/whoami")])
            #expect(result.standardOutput == "origin=www host=www.example.test:\(lab.httpsPort)\n")
            let headers = try await ProxyLab.curl(["--proxy", proxy, "--cacert", lab.caFile, https("www.example.test", "/headers")])
            #expect(Self.lines(headers.standardOutput).contains("host: www.example.test:\(lab.httpsPort)"))
            #expect(!Self.lines(headers.standardOutput).contains { $0.hasPrefix("x-client:") })
            let entries = await log.waitFor(2)
            #expect(entries.count == 2)
            #expect(entries.allSatisfy { $0.method == "CONNECT" && $0.status == 200 && $0.rules.isEmpty })
            // The same path over plain HTTP is blocked.
            let plain = try await ProxyLab.curl(["-x", proxy, "-o", "/dev/null", "-w", "%{http_code}", http("www.example.test", "/headers")])
            #expect(plain.standardOutput == "403")
        }
    }

    @Test func connectToAHostARespondRuleAnswersIs403() async throws {
        try await withRules(#"{"action": "respond", "host": "www.example.test", "body": "local"}"#) { proxy, _, _, _ in
            let address = try #require(SocketAddress(String(proxy.dropFirst("http://".count))))
            let reply = try await TestSockets.exchange(address, Array("CONNECT www.example.test:443 HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            #expect(RefusalTests.statusAndBody(reply) == ("HTTP/1.1 403 Forbidden",
                                                          "rules[0] (respond host www.example.test) answers this host locally, "
                                                              + "which a CONNECT tunnel cannot carry (its requests are inside TLS).\n"))
            let plain = try await ProxyLab.curl(["-x", proxy, http("www.example.test", "/anything")])
            #expect(plain.standardOutput == "local")
        }
    }
}
