import Foundation
import HostPin
import Testing

/// What loaded rules decide for a request: pure, no network.
@Suite struct RulesDecisionTests {
    private func rules(_ json: String, files: [String: Data] = [:]) throws -> Rules {
        try RulesFolder.with(files: files) { try $0.load("{\"rules\": [\(json)]}") }
    }

    private func decide(_ rules: Rules, _ url: String, method: String = "GET",
                        headers: [(name: String, value: String)] = []) throws -> PolicyDecision {
        rules.decide(PolicyRequest(method: method, url: try #require(URL(string: url)), headers: headers))
    }

    // MARK: Matching

    @Test(arguments: [
        ("ads.example.test", true), ("ADS.Example.TEST.", true), ("x.ads.example.test", false), ("example.test", false),
    ])
    func exactHostMatchesThatNameInAnyCase(_ host: String, _ blocked: Bool) throws {
        let rules = try rules("{\"action\": \"block\", \"host\": \"ads.example.test\"}")
        let decision = try decide(rules, "https://\(host):8443/x")
        #expect((decision.rule?.index == 0) == blocked)
    }

    @Test(arguments: [
        ("www.example.test", true), ("a.b.example.test", true), ("example.test", false), ("wwwexample.test", false),
        ("xn--bcher-kva.example.test", true),
    ])
    func suffixMatchesNamesBelowButNotTheApex(_ host: String, _ matched: Bool) throws {
        let rules = try rules("{\"action\": \"block\", \"host\": \"*.example.test\"}")
        #expect((try decide(rules, "http://\(host)/").rule != nil) == matched)
    }

    @Test func unicodeHostPatternMatchesItsALabel() throws {
        let rules = try rules("{\"action\": \"block\", \"host\": \"BÜCHER.example.test\"}")
        #expect(try decide(rules, "http://xn--bcher-kva.example.test/").rule?.index == 0)
        #expect(try decide(rules, "http://bücher.example.test/").rule?.index == 0)
    }

    @Test(arguments: [
        ("http://www.example.test/logo.png", true), ("http://WWW.example.test:80/logo.png", true),
        ("http://www.example.test/logo.png#top", true), ("http://www.example.test/logo.png?v=2", false),
        ("https://www.example.test/logo.png", false), ("http://www.example.test:8080/logo.png", false),
        ("http://www.example.test/Logo.png", false),
    ])
    func exactURLMatchesThatURLOnly(_ url: String, _ matched: Bool) throws {
        let rules = try rules("{\"action\": \"block\", \"url\": \"http://www.example.test/logo.png\"}")
        #expect((try decide(rules, url).rule != nil) == matched)
    }

    @Test(arguments: [
        ("http://www.example.test/img/a.png", true), ("http://www.example.test/img/a/b.png", true),
        ("http://www.example.test/img/a.png?v=1", false), ("http://www.example.test/img/a.gif", false),
        ("http://www.example.test/other/a.png", false),
    ])
    func urlGlobMatchesAnyRunOfCharacters(_ url: String, _ matched: Bool) throws {
        let rules = try rules("{\"action\": \"block\", \"url\": \"http://www.example.test/img/*.png\"}")
        #expect((try decide(rules, url).rule != nil) == matched)
    }

    @Test(arguments: [
        ("http://cdn.example.test/old/a.css", true), ("http://cdn.example.test/old/", true),
        ("http://cdn.example.test/old", false), ("http://cdn.example.test/older/a.css", false),
        ("http://cdn.example.test.evil.test/old/a.css", false),
    ])
    func urlPrefixMatchesThePathsBelowOnThatOrigin(_ url: String, _ matched: Bool) throws {
        let rules = try rules("{\"action\": \"block\", \"urlPrefix\": \"http://cdn.example.test/old/\"}")
        #expect((try decide(rules, url).rule != nil) == matched)
    }

    @Test(arguments: [
        ("http://www.example.test/api/v1/users", true), ("https://www.example.test:8443/api/x?q=1", true),
        ("http://www.example.test/web/api/x", false),
    ])
    func hostWithPathGlobMatchesThePathOnAnyPortAndScheme(_ url: String, _ matched: Bool) throws {
        let rules = try rules("{\"action\": \"block\", \"host\": \"www.example.test\", \"path\": \"/api/*\"}")
        #expect((try decide(rules, url).rule != nil) == matched)
    }

    // MARK: Order and defaults

    @Test func firstMatchingRuleWinsInFileOrder() throws {
        let rules = try rules("""
            {"action": "respond", "url": "http://www.example.test/logo.png", "body": "local"},
            {"action": "block", "host": "www.example.test", "path": "/*.png"},
            {"action": "pin", "host": "www.example.test", "addresses": ["127.0.0.10"]}
            """)
        #expect(try decide(rules, "http://www.example.test/logo.png").rule?.index == 0)
        #expect(try decide(rules, "http://www.example.test/other.png").rule?.index == 1)
        #expect(try decide(rules, "http://www.example.test/page").rule?.index == 2)
    }

    @Test func requestNoRuleMatchesIsPinnedThroughTheResolver() throws {
        let rules = try rules("{\"action\": \"block\", \"host\": \"ads.example.test\"}")
        guard case .send(.resolve, let edits) = try decide(rules, "http://www.example.test/") else {
            Issue.record("expected send through the resolver")
            return
        }
        #expect(edits.isEmpty)
        guard case .send(.resolve, _) = try decide(Rules(), "http://www.example.test/") else {
            Issue.record("no rules: expected send through the resolver")
            return
        }
    }

    @Test(arguments: [("http://127.0.0.1/", PassReason.addressLiteral), ("http://[::1]:8080/", .addressLiteral),
                      ("http://localhost/", .localhost), ("https://a.localhost/", .localhost)])
    func addressLiteralsAndLocalhostAlwaysPass(_ url: String, _ reason: PassReason) throws {
        let rules = try rules("{\"action\": \"block\", \"host\": \"*\"}")
        guard case .pass(let passed) = try decide(rules, url) else {
            Issue.record("expected pass for \(url)")
            return
        }
        #expect(passed == reason)
    }

    // MARK: Actions

    @Test func blockNamesTheRule() throws {
        let rules = try rules("{\"action\": \"pass\", \"host\": \"intranet.example.test\"}, {\"action\": \"block\", \"host\": \"ads.example.test\"}")
        guard case .block(let rule) = try decide(rules, "http://ads.example.test/banner.js") else {
            Issue.record("expected block")
            return
        }
        #expect(rule.description == "rules[1] (block host ads.example.test)")
    }

    @Test func passRuleLeavesTheHostToTheSystem() throws {
        let rules = try rules("{\"action\": \"pass\", \"host\": \"intranet.example.test\"}")
        guard case .pass(.rule(let rule)) = try decide(rules, "https://intranet.example.test/") else {
            Issue.record("expected pass by rule")
            return
        }
        #expect(rule.index == 0)
    }

    @Test func pinGivesItsAddressesAndHeaderRulesStillApply() throws {
        let rules = try rules("""
            {"action": "pin", "host": "nx.example.test", "addresses": ["127.0.0.10", "::1"]},
            {"action": "header", "host": "*.example.test", "set": {"X-Client": "hostpin"}}
            """)
        guard case .send(.pinned(let addresses, let rule), let edits) = try decide(rules, "http://nx.example.test/") else {
            Issue.record("expected pinned")
            return
        }
        #expect(addresses.map(\.description) == ["127.0.0.10", "::1"])
        #expect(rule.index == 0)
        #expect(edits == [.set(name: "X-Client", value: "hostpin")])
    }

    @Test func respondFromAFileTakesItsTypeFromTheExtension() throws {
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        let rules = try rules("{\"action\": \"respond\", \"url\": \"http://www.example.test/logo.png\", \"file\": \"img/logo.png\"}",
                              files: ["img/logo.png": png])
        guard case .respond(let response) = try decide(rules, "http://www.example.test/logo.png") else {
            Issue.record("expected respond")
            return
        }
        #expect(response.status == 200)
        #expect(response.body == png)
        #expect(response.headers.map { "\($0.name): \($0.value)" } == ["Content-Type: image/png", "Content-Length: 8"])
        guard case .respond(let head) = try decide(rules, "http://www.example.test/logo.png", method: "HEAD") else {
            Issue.record("expected respond to HEAD")
            return
        }
        #expect(head.body.isEmpty)
        #expect(head.headers.contains { $0.name == "Content-Length" && $0.value == "8" })
    }

    @Test func inlineResponseCarriesItsStatusHeadersAndBody() throws {
        let rules = try rules("""
            {"action": "respond", "urlPrefix": "http://api.example.test/v1/", "status": 503,
             "headers": {"Retry-After": "30"}, "body": "down for maintenance\\n"}
            """)
        guard case .respond(let response) = try decide(rules, "http://api.example.test/v1/users") else {
            Issue.record("expected respond")
            return
        }
        #expect(response.status == 503)
        #expect(String(decoding: response.body, as: UTF8.self) == "down for maintenance\n")
        #expect(response.headers.map { "\($0.name): \($0.value)" }
            == ["Retry-After: 30", "Content-Type: text/plain; charset=utf-8", "Content-Length: 21"])
    }

    @Test func entityTagAnswersAMatchingIfNoneMatchWith304() throws {
        let rules = try rules("{\"action\": \"respond\", \"url\": \"http://www.example.test/a.css\", \"body\": \"a{}\", \"etag\": true}")
        guard case .respond(let first) = try decide(rules, "http://www.example.test/a.css") else {
            Issue.record("expected respond")
            return
        }
        let tag = try #require(first.headers.first { $0.name == "ETag" }?.value)
        #expect(tag.hasPrefix("\"") && tag.hasSuffix("-3\""))
        guard case .respond(let again) = try decide(rules, "http://www.example.test/a.css",
                                                    headers: [("if-none-match", "\"other\", W/\(tag)")]) else {
            Issue.record("expected respond")
            return
        }
        #expect(again.status == 304)
        #expect(again.body.isEmpty)
        #expect(again.headers.map(\.value) == [tag])
    }

    @Test func redirectPrefixKeepsTheRestOfThePathAndQuery() throws {
        let rules = try rules("{\"action\": \"redirect\", \"urlPrefix\": \"http://cdn.example.test/old/\", \"to\": \"https://cdn2.example.test/new/\"}")
        guard case .redirect(let redirect) = try decide(rules, "http://cdn.example.test/old/css/a.css?v=2") else {
            Issue.record("expected redirect")
            return
        }
        #expect(redirect.target.absoluteString == "https://cdn2.example.test/new/css/a.css?v=2")
        #expect(redirect.isTransparent)
    }

    @Test(arguments: [
        ("cdn.example.test", "http://cdn.example.test:8080/style.css?v=1"),
        ("cdn.example.test:9000", "http://cdn.example.test:9000/style.css?v=1"),
        ("http://cdn.example.test/clean.css", "http://cdn.example.test/clean.css"),
    ])
    func redirectToAHostKeepsThePathAndToAURLReplacesIt(_ to: String, _ target: String) throws {
        let rules = try rules("{\"action\": \"redirect\", \"host\": \"www.example.test\", \"path\": \"/style.css\", \"to\": \"\(to)\", \"status\": 307}")
        guard case .redirect(let redirect) = try decide(rules, "http://www.example.test:8080/style.css?v=1") else {
            Issue.record("expected redirect")
            return
        }
        #expect(redirect.target.absoluteString == target)
        #expect(redirect.status == 307)
    }

    @Test func headerRulesApplyInFileOrderAndNeverTouchOtherHosts() throws {
        let rules = try rules("""
            {"action": "header", "host": "*.example.test", "set": {"X-Client": "hostpin"}, "remove": ["Cookie"]},
            {"action": "header", "host": "api.example.test", "set": {"x-client": "api"}, "add": {"X-Tag": ["a", "b"]}}
            """)
        guard case .send(.resolve, let edits) = try decide(rules, "http://api.example.test/") else {
            Issue.record("expected send")
            return
        }
        let fields = HeaderEdit.apply(edits, to: [("Accept", "*/*"), ("cookie", "a=1"), ("X-Client", "app")])
        #expect(fields.map { "\($0.name): \($0.value)" } == ["Accept: */*", "x-client: api", "X-Tag: a", "X-Tag: b"])
        guard case .send(.resolve, let none) = try decide(rules, "http://other.test/") else {
            Issue.record("expected send")
            return
        }
        #expect(none.isEmpty)
    }

    /// A CONNECT tunnel (the proxy, https) carries no URL: only host rules without a path apply.
    @Test func connectIsDecidedByHostRulesOnly() throws {
        let rules = try rules("""
            {"action": "respond", "url": "https://www.example.test/logo.png", "body": "x"},
            {"action": "block", "host": "www.example.test", "path": "/ads/*"},
            {"action": "pin", "host": "www.example.test", "addresses": ["127.0.0.10"]},
            {"action": "block", "host": "ads.example.test"}
            """)
        guard case .send(.pinned(_, let rule), _) = rules.decide(PolicyRequest(connectTo: "www.example.test", port: 443)) else {
            Issue.record("expected pinned")
            return
        }
        #expect(rule.index == 2)
        guard case .block(let blocked) = rules.decide(PolicyRequest(connectTo: "ADS.example.test", port: 443)) else {
            Issue.record("expected block")
            return
        }
        #expect(blocked.index == 3)
    }
}
