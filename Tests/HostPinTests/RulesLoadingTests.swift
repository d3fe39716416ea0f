import Foundation
import HostPin
import HostPinTestSupport
import Testing

/// Loading rules files: every bad file is refused with a typed error naming each problem at its key
/// path, and nothing is half-loaded.
@Suite struct RulesLoadingTests {
    // MARK: The file itself

    @Test func theDocumentedExampleLoads() throws {
        try RulesFolder.with(files: ["logo.png": Data([0x89, 0x50, 0x4E, 0x47])]) { folder in
            let rules = try folder.load("""
                {"rules": [ {"action": "block", "host": "ads.example.test"},
                  {"action": "respond", "url": "http://www.example.test/logo.png", "file": "logo.png"},
                  {"action": "redirect", "urlPrefix": "http://cdn.example.test/old/", "to": "http://cdn.example.test/new/"},
                  {"action": "pin", "host": "api.example.test", "addresses": ["127.0.0.10"]},
                  {"action": "header", "host": "*.example.test", "set": {"X-Client": "hostpin"}},
                  {"action": "pass", "host": "intranet.example.test"} ]}
                """)
            #expect(rules.references.map(\.description) == [
                "rules[0] (block host ads.example.test)",
                "rules[1] (respond url http://www.example.test/logo.png)",
                "rules[2] (redirect urlPrefix http://cdn.example.test/old/)",
                "rules[3] (pin host api.example.test)",
                "rules[4] (header host *.example.test)",
                "rules[5] (pass host intranet.example.test)",
            ])
        }
    }

    /// The example in README.md's "Rules" section loads as written.
    @Test func theReadmeExampleLoads() throws {
        let readme = try String(contentsOf: Lab.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.range(of: "\n## Rules\n"))
        let start = try #require(readme.range(of: "```json\n", range: section.upperBound..<readme.endIndex))
        let end = try #require(readme.range(of: "\n```", range: start.upperBound..<readme.endIndex))
        try RulesFolder.with(files: ["logo.png": Data([0x89, 0x50, 0x4E, 0x47])]) { folder in
            let rules = try folder.load(String(readme[start.upperBound..<end.lowerBound]))
            #expect(rules.count == 9)
        }
    }

    @Test func missingFileIsRefused() throws {
        let path = "/nonexistent/hostpin-rules.json"
        #expect(throws: RulesError.file(path: path, .missing)) { try Rules(contentsOf: URL(fileURLWithPath: path)) }
    }

    @Test func directoryIsRefused() throws {
        try RulesFolder.with(files: [:]) { folder in
            #expect(throws: RulesError.file(path: folder.path, .notARegularFile)) {
                try Rules(contentsOf: URL(fileURLWithPath: folder.path))
            }
        }
    }

    /// Root reads any file whatever its mode, so the unreadable file is a symbolic link loop.
    @Test func unreadableFileIsRefusedWithTheSystemsReason() throws {
        try RulesFolder.with(files: [:]) { folder in
            let path = folder.path + "/loop.json"
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: path)
            #expect(throws: RulesError.file(path: path, .unreadable("Too many levels of symbolic links"))) {
                try Rules(contentsOf: URL(fileURLWithPath: path))
            }
        }
    }

    @Test(arguments: ["", "   \n\t "])
    func emptyFileIsRefused(_ text: String) throws {
        try RulesFolder.with(files: [:]) { folder in
            #expect(throws: RulesError.empty(source: folder.path + "/rules.json")) { try folder.load(text) }
        }
    }

    @Test(arguments: [
        ("{", "Unexpected end of file during JSON parse."),
        ("rules: []", "Invalid value around character 0."),
        ("{\"rules\": [}", "Invalid value around character 11."),
        (String(repeating: "[", count: 100_000), nil),
    ])
    func textThatIsNotJSONIsRefusedSayingWhere(_ text: String, _ reason: String?) throws {
        try RulesFolder.with(files: [:]) { folder in
            let error = #expect(throws: RulesError.self) { try folder.load(text) }
            guard case .notJSON(let source, let found)? = error else {
                Issue.record("expected notJSON, got \(String(describing: error))")
                return
            }
            #expect(source == folder.path + "/rules.json")
            if let reason { #expect(found == reason) } else { #expect(!found.isEmpty) }
            #expect(error?.description == "\(source) is not JSON: \(found)")
        }
    }

    /// A 100 MB file (sparse: it takes no disk) is refused from its size, before any byte is read.
    @Test func fileAboveTheLimitIsRefusedWithoutReadingIt() throws {
        try RulesFolder.with(files: [:]) { folder in
            let path = folder.path + "/huge.json"
            #expect(FileManager.default.createFile(atPath: path, contents: nil))
            let handle = try #require(FileHandle(forWritingAtPath: path))
            try handle.truncate(atOffset: 100_000_000)
            try handle.close()
            let limit = Rules.fileLimit
            #expect(limit == 10 << 20)
            #expect(throws: RulesError.file(path: path, .tooLarge(limit: limit))) {
                try Rules(contentsOf: URL(fileURLWithPath: path))
            }
            #expect(RulesError.file(path: path, .tooLarge(limit: limit)).description
                == "cannot use the rules file \(path): it is larger than 10 MiB (10485760 bytes)")
        }
    }

    @Test(arguments: [
        ("[]", "(top level): must be an object {\"rules\": [...]}, not an array"),
        ("{}", "rules: is missing"),
        ("{\"rules\": {}}", "rules: must be an array of rules, not an object"),
        ("{\"rules\": [], \"rulez\": []}", "rulez: unknown key (this rule takes rules and comment)"),
        ("{\"rules\": [\"block\"]}", "rules[0]: must be an object, not a string"),
        ("{\"rules\": [{\"host\": \"a.example.test\"}]}", "rules[0].action: is missing"),
        ("{\"rules\": [{\"action\": 1, \"host\": \"a.example.test\"}]}", "rules[0].action: must be a string, not a number"),
    ])
    func wrongShapeIsNamedAtItsKeyPath(_ json: String, _ problem: String) throws {
        try expectProblems(json, [problem])
    }

    @Test func anEmptyRuleListLoadsAsNoRules() throws {
        try RulesFolder.with(files: [:]) { folder in
            let rules = try folder.load("{\"rules\": [], \"comment\": \"none yet\"}")
            #expect(rules.count == 0)
        }
    }

    // MARK: Every problem, each at its key path

    @Test func everyProblemIsReportedAtItsKeyPathAndNothingLoads() throws {
        try RulesFolder.with(files: ["folder/keep": Data()]) { folder in
            let error = #expect(throws: RulesError.self) {
                try folder.load("""
                    {"rules": [
                      {"action": "blok", "host": "ads.example.test"},
                      {"action": "block", "host": "ads..example.test"},
                      {"action": "redirect", "url": "http://www.example.test/a", "to": "ftp://files.example.test/a"},
                      {"action": "pin", "host": "api.example.test", "addresses": ["127.0.0.10", "10.0.0.300", "api"]},
                      {"action": "respond", "url": "http://www.example.test/logo.png", "file": "missing.png"},
                      {"action": "respond", "url": "http://www.example.test/dir", "file": "folder"},
                      {"action": "redirect", "url": "http://www.example.test:70000/", "to": "cdn.example.test:99999"},
                      {"action": "block", "host": "a\\u2488b.example.test"},
                      {"action": "header", "host": "www.example.test", "set": {"Host": "evil.example.test"}},
                      {"action": "block", "host": "127.0.0.1"},
                      {"action": "pin", "url": "http://x.example.test/", "addresses": ["127.0.0.1"]},
                      {"action": "block", "host": "a.*.example.test"},
                      {"action": "block", "host": "ok.example.test", "hots": 1}
                    ]}
                    """)
            }
            guard case .invalid(let source, let problems)? = error else {
                Issue.record("expected invalid, got \(String(describing: error))")
                return
            }
            #expect(source == folder.path + "/rules.json")
            #expect(problems.map(\.description) == [
                "rules[0].action: unknown action 'blok' (the actions are block, respond, redirect, pin, header and pass)",
                "rules[1].host: 'ads..example.test' is not a host name: it has an empty label (two dots in a row, or a leading dot)",
                "rules[2].to: 'ftp://files.example.test/a' is not an http or https URL: a redirect must go to one",
                "rules[3].addresses[1]: '10.0.0.300' is not an IPv4 or IPv6 address",
                "rules[3].addresses[2]: 'api' is not an IPv4 or IPv6 address",
                "rules[4].file: cannot use file \(folder.path)/missing.png: it does not exist",
                "rules[5].file: cannot use file \(folder.path)/folder: it is not a regular file (a directory, device, FIFO or socket)",
                "rules[6].url: 'http://www.example.test:70000/' has a port out of range (1-65535)",
                "rules[6].to: 'cdn.example.test:99999' has a port out of range (1-65535)",
                "rules[7].host: 'a\u{2488}b.example.test' is not a host name: it is not a valid internationalised name "
                    + "(string contains a disallowed character)",
                "rules[8].set.Host: 'Host' cannot be set by a rule: HostPin sets it for each request",
                "rules[9].host: '127.0.0.1' is an IP literal or localhost, which always pass: no rule applies to them",
                "rules[10].url: a pin rule matches by host only, not by url: DNS knows names, not URLs",
                "rules[11].host: 'a.*.example.test' has a misplaced '*': a wildcard is a whole first label ('*.example.test') or '*' alone",
                "rules[12].hots: unknown key (this rule takes action, comment, host, path, url and urlPrefix)",
            ])
            #expect(error?.description.hasPrefix("\(folder.path)/rules.json has 15 errors:\n  rules[0].action: ") == true)
        }
    }

    @Test(arguments: [
        ("{\"action\": \"block\"}", "rules[0]: the rule matches nothing: give host, url or urlPrefix"),
        ("{\"action\": \"block\", \"host\": \"a.example.test\", \"url\": \"http://a.example.test/\"}",
         "rules[0]: give one matcher, not host and url"),
        ("{\"action\": \"block\", \"url\": \"http://a.example.test/\", \"path\": \"/x\"}", "rules[0].path: path narrows a host matcher: give host too"),
        ("{\"action\": \"block\", \"host\": \"a.example.test\", \"path\": \"x\"}", "rules[0].path: 'x' is not a path: it must start with '/'"),
        ("{\"action\": \"pass\", \"host\": \"a.example.test\", \"path\": \"/x\"}",
         "rules[0].path: a pass rule matches by host only, not by path: DNS knows names, not URLs"),
        ("{\"action\": \"block\", \"url\": \"file:///etc/passwd\"}", "rules[0].url: 'file:///etc/passwd' is not an http or https URL with a host"),
        ("{\"action\": \"block\", \"host\": \"*.localhost\"}",
         "rules[0].host: '*.localhost' is an IP literal or localhost, which always pass: no rule applies to them"),
        ("{\"action\": \"redirect\", \"host\": \"a.example.test\"}", "rules[0].to: is missing"),
        ("{\"action\": \"redirect\", \"host\": \"a.example.test\", \"to\": \"javascript:alert(1)\"}",
         "rules[0].to: 'javascript:alert(1)' is not an http or https URL: a redirect must go to one"),
        ("{\"action\": \"redirect\", \"host\": \"a.example.test\", \"to\": \"b.example.test\", \"status\": 200}",
         "rules[0].status: 200 is not a status this rule can answer with (301, 302, 303, 307 or 308, or none for a transparent redirect)"),
        ("{\"action\": \"pin\", \"host\": \"a.example.test\"}", "rules[0].addresses: is missing"),
        ("{\"action\": \"pin\", \"host\": \"a.example.test\", \"addresses\": []}", "rules[0].addresses: must not be empty"),
        ("{\"action\": \"pin\", \"host\": \"a.example.test\", \"addresses\": \"127.0.0.1\"}",
         "rules[0].addresses: must be an array of IP addresses, not a string"),
        ("{\"action\": \"respond\", \"url\": \"http://a.example.test/\", \"file\": \"x\", \"body\": \"y\"}",
         "rules[0]: give one of file or body, not both"),
        ("{\"action\": \"respond\", \"url\": \"http://a.example.test/\", \"status\": 204, \"body\": \"y\"}",
         "rules[0].body: a 204 response has no body"),
        ("{\"action\": \"respond\", \"url\": \"http://a.example.test/\", \"status\": 99}",
         "rules[0].status: 99 is not a status this rule can answer with (200-599)"),
        ("{\"action\": \"respond\", \"url\": \"http://a.example.test/\", \"etag\": \"yes\"}",
         "rules[0].etag: must be true or false, not a string"),
        ("{\"action\": \"respond\", \"url\": \"http://a.example.test/\", \"headers\": {\"Content-Length\": \"5\"}}",
         "rules[0].headers.Content-Length: 'Content-Length' cannot be set by a rule: HostPin sets it for each request"),
        ("{\"action\": \"header\", \"host\": \"a.example.test\"}", "rules[0]: a header rule needs set, add or remove"),
        ("{\"action\": \"header\", \"host\": \"a.example.test\", \"set\": {\"Bad Name\": \"x\"}}",
         "rules[0].set.Bad Name: 'Bad Name' is not a header field name (RFC 9110 §5.1: a token)"),
        ("{\"action\": \"header\", \"host\": \"a.example.test\", \"add\": {\"X-A\": \"1\\r\\nX-B: 2\"}}",
         "rules[0].add.X-A: the value of 'X-A' contains CR, LF or NUL"),
        ("{\"action\": \"header\", \"host\": \"a.example.test\", \"remove\": [\"HOST\"]}",
         "rules[0].remove[0]: 'HOST' cannot be set by a rule: HostPin sets it for each request"),
    ])
    func badRuleIsNamedAtItsKeyPath(_ rule: String, _ problem: String) throws {
        try expectProblems("{\"rules\": [\(rule)]}", [problem])
    }

    /// A respond rule's file above the limit is refused like the rules file itself.
    @Test func respondFileAboveTheLimitIsRefused() throws {
        try RulesFolder.with(files: [:]) { folder in
            let path = folder.path + "/big.bin"
            #expect(FileManager.default.createFile(atPath: path, contents: nil))
            let handle = try #require(FileHandle(forWritingAtPath: path))
            try handle.truncate(atOffset: 100_000_000)
            try handle.close()
            let error = #expect(throws: RulesError.self) {
                try folder.load("{\"rules\": [{\"action\": \"respond\", \"url\": \"http://a.example.test/\", \"file\": \"big.bin\"}]}")
            }
            #expect(error == .invalid(source: folder.path + "/rules.json", problems: [
                RuleProblem("rules[0].file", .file(path: path, .tooLarge(limit: 10 << 20))),
            ]))
        }
    }

    @Test func unreadableRespondFileIsRefused() throws {
        try RulesFolder.with(files: [:]) { folder in
            let path = folder.path + "/loop.png"
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: path)
            let error = #expect(throws: RulesError.self) {
                try folder.load("{\"rules\": [{\"action\": \"respond\", \"url\": \"http://a.example.test/\", \"file\": \"loop.png\"}]}")
            }
            #expect(error?.description == "\(folder.path)/rules.json has 1 error:\n"
                + "  rules[0].file: cannot use file \(path): it cannot be read (Too many levels of symbolic links)")
        }
    }

    // MARK: Rules that can never apply, and loops

    @Test(arguments: [
        ("{\"action\": \"block\", \"host\": \"*.example.test\"}", "{\"action\": \"block\", \"host\": \"ads.example.test\"}"),
        ("{\"action\": \"pass\", \"host\": \"*\"}", "{\"action\": \"block\", \"url\": \"http://a.example.test/x\"}"),
        ("{\"action\": \"block\", \"host\": \"a.example.test\"}",
         "{\"action\": \"respond\", \"urlPrefix\": \"http://a.example.test/x/\", \"body\": \"x\"}"),
        ("{\"action\": \"block\", \"urlPrefix\": \"http://a.example.test/x/\"}",
         "{\"action\": \"block\", \"url\": \"http://A.example.test:80/x/*.png\"}"),
        ("{\"action\": \"block\", \"url\": \"http://a.example.test/*.png\"}", "{\"action\": \"block\", \"url\": \"http://a.example.test/logo.png\"}"),
        ("{\"action\": \"pin\", \"host\": \"a.example.test\", \"addresses\": [\"127.0.0.10\"]}",
         "{\"action\": \"block\", \"host\": \"a.example.test\", \"path\": \"/ads/*\"}"),
    ])
    func ruleCoveredByAnEarlierOneIsRefused(_ earlier: String, _ later: String) throws {
        try RulesFolder.with(files: [:]) { folder in
            let error = #expect(throws: RulesError.self) { try folder.load("{\"rules\": [\(earlier), \(later)]}") }
            guard case .invalid(_, let problems)? = error, problems.count == 1 else {
                Issue.record("expected one problem, got \(String(describing: error))")
                return
            }
            #expect(problems[0].keyPath == "rules[1]")
            guard case .shadowed(let by) = problems[0].reason else {
                Issue.record("expected shadowed, got \(problems[0])")
                return
            }
            #expect(by.index == 0)
            #expect(problems[0].description.hasPrefix("rules[1]: this rule can never match: rules[0] ("))
        }
    }

    /// The other order is fine: the narrower rule first, the broader one for the rest.
    @Test func narrowerRuleBeforeABroaderOneLoads() throws {
        try RulesFolder.with(files: [:]) { folder in
            let rules = try folder.load("""
                {"rules": [{"action": "block", "host": "ads.example.test"}, {"action": "pass", "host": "*.example.test"},
                           {"action": "block", "url": "http://other.test/*.png"}, {"action": "block", "urlPrefix": "http://other.test/x/"}]}
                """)
            #expect(rules.count == 4)
        }
    }

    @Test func headerRuleForRequestsThatAreNeverSentIsRefused() throws {
        try expectProblems("""
            {"rules": [{"action": "header", "host": "ads.example.test", "set": {"X-A": "1"}},
                       {"action": "block", "host": "*.example.test"}]}
            """, ["rules[0]: this rule never applies: rules[1] (block host *.example.test) answers every request it matches without sending it"])
    }

    @Test func redirectLoopBetweenTwoRulesIsRefused() throws {
        try expectProblems("""
            {"rules": [{"action": "redirect", "urlPrefix": "http://a.example.test/", "to": "http://b.example.test/"},
                       {"action": "redirect", "host": "b.example.test", "to": "a.example.test", "status": 302}]}
            """, ["rules[0].to: redirect loop: rules[0] → rules[1] → rules[0]"])
    }

    @Test func redirectToItselfIsRefused() throws {
        try expectProblems("""
            {"rules": [{"action": "redirect", "urlPrefix": "http://a.example.test/old/", "to": "http://a.example.test/old/new/"}]}
            """, ["rules[0].to: redirect loop: rules[0] → rules[0]"])
    }

    @Test func redirectChainWithoutALoopLoads() throws {
        try RulesFolder.with(files: [:]) { folder in
            let rules = try folder.load("""
                {"rules": [{"action": "redirect", "url": "http://a.example.test/x", "to": "http://b.example.test/x"},
                           {"action": "redirect", "host": "b.example.test", "to": "c.example.test"}]}
                """)
            #expect(rules.count == 2)
        }
    }

    // MARK: Helpers

    private func expectProblems(_ json: String, _ expected: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        try RulesFolder.with(files: [:]) { folder in
            let error = #expect(throws: RulesError.self, sourceLocation: sourceLocation) { try folder.load(json) }
            guard case .invalid(_, let problems)? = error else {
                Issue.record("expected invalid, got \(String(describing: error))", sourceLocation: sourceLocation)
                return
            }
            #expect(problems.map(\.description) == expected, sourceLocation: sourceLocation)
        }
    }
}

/// A temporary folder holding a rules file and the files its rules name, removed afterwards.
struct RulesFolder {
    let path: String

    @discardableResult
    static func with<T>(files: [String: Data], _ body: (RulesFolder) throws -> T) throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-rules-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        for (name, data) in files {
            let file = folder.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: file)
        }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return try body(RulesFolder(path: folder.path))
    }

    /// Writes `json` to `rules.json` in the folder and loads it.
    func load(_ json: String) throws -> Rules {
        let file = URL(fileURLWithPath: path + "/rules.json")
        try Data(json.utf8).write(to: file)
        return try Rules(contentsOf: file)
    }
}
