import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin
import HostPinTestSupport
import HostPinURL
import Testing

extension InterceptorTests {
    /// Interception rules applied by the interceptor, against the lab's origins. Each test installs its
    /// own rules (process-wide, like the resolver) and puts the plain setup back afterwards.
    @Suite struct RulesInterceptorTests {
        let lab: Lab
        let port: UInt16

        init() throws {
            lab = try Lab.current()
            port = lab.httpPort
        }

        /// A 2×2 RGB PNG.
        static let logo = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEUlEQVR4nGP4z8DA8B+MgBgAHfAD/dPQfSYAAAAASUVORK5CYII=")!

        /// Writes `rules` (with `PORT` standing for the lab's HTTP port) and `files` to a temporary
        /// folder, loads them, and returns a pinned session applying them.
        private func session(_ rules: String, files: [String: Data] = [:],
                             redirects: RedirectPolicy = .default) throws -> URLSession {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-rules-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            for (name, data) in files { try data.write(to: folder.appendingPathComponent(name)) }
            let file = folder.appendingPathComponent("rules.json")
            try Data("{\"rules\": [\(rules.replacingOccurrences(of: "PORT", with: "\(port)"))]}".utf8).write(to: file)
            return try PinnedLab.session(redirects: redirects, rules: try Rules(contentsOf: file))
        }

        @Test func logoIsAnsweredFromALocalPNGWithoutTheNetwork() async throws {
            let session = try session("{\"action\": \"respond\", \"url\": \"http://www.example.test:PORT/logo.png\", \"file\": \"logo.png\"}",
                                      files: ["logo.png": Self.logo])
            defer { PinnedLab.reinstall() }
            let resolver = try #require(PinnedLab.resolver)
            let before = resolver.count("www.example.test")
            let url = try PinnedLab.url("www.example.test", "/logo.png")
            let (data, response) = try await session.data(from: url)
            let http = try #require(response as? HTTPURLResponse)
            #expect(data == Self.logo)
            #expect(http.statusCode == 200)
            #expect(http.url == url)
            #expect(http.value(forHTTPHeaderField: "Content-Type") == "image/png")
            #expect(http.value(forHTTPHeaderField: "Content-Length") == "\(Self.logo.count)")
            #expect(resolver.count("www.example.test") == before)
            // The origin itself has no such file: the bytes came from the rule.
            let (_, plain) = try await PinnedLab.session().data(from: url)
            #expect((plain as? HTTPURLResponse)?.statusCode == 404)
        }

        @Test func stylesheetIsRedirectedTransparentlyToACleanCopyOnAnotherOrigin() async throws {
            let session = try session("""
                {"action": "redirect", "url": "http://www.example.test:PORT/style.css", "to": "http://cdn.example.test:PORT/whoami"}
                """)
            defer { PinnedLab.reinstall() }
            let url = try PinnedLab.url("www.example.test", "/style.css")
            let (data, response) = try await session.data(from: url)
            #expect(String(decoding: data, as: UTF8.self) == "origin=cdn host=cdn.example.test:\(port)\n")
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(response.url == url)
        }

        @Test func stylesheetRedirectWithAStatusIsARealRedirectTheClientFollows() async throws {
            let rule = """
                {"action": "redirect", "url": "http://www.example.test:PORT/style.css", "to": "http://cdn.example.test:PORT/whoami", "status": 302}
                """
            let url = try PinnedLab.url("www.example.test", "/style.css")
            let target = try PinnedLab.url("cdn.example.test", "/whoami")
            defer { PinnedLab.reinstall() }
            let (data, response) = try await session(rule).data(from: url)
            #expect(String(decoding: data, as: UTF8.self) == "origin=cdn host=cdn.example.test:\(port)\n")
            #expect(response.url == target)
            let (_, unfollowed) = try await session(rule, redirects: .doNotFollow).data(from: url)
            let http = try #require(unfollowed as? HTTPURLResponse)
            #expect(http.statusCode == 302)
            #expect(http.url == url)
            #expect(http.value(forHTTPHeaderField: "Location") == target.absoluteString)
        }

        @Test func blockedHostFailsWithAURLErrorNamingTheRule() async throws {
            let session = try session("{\"action\": \"block\", \"host\": \"*.ads.example.test\"}")
            defer { PinnedLab.reinstall() }
            let resolver = try #require(PinnedLab.resolver)
            let url = try PinnedLab.url("banner.ads.example.test", "/whoami")
            let error = await #expect(throws: URLError.self) { try await session.data(from: url) }
            #expect(error?.code == .resourceUnavailable)
            #expect(error?.failingURL == url)
            #expect(error?.localizedDescription == "blocked by rules[0] (block host *.ads.example.test)")
            #expect(error?.userInfo[PinnedURLProtocol.ruleUserInfoKey] as? String == "rules[0] (block host *.ads.example.test)")
            #expect(resolver.count("banner.ads.example.test") == 0)
        }

        /// The header rule reaches its host, and not the host a redirect leads to.
        @Test func headerRuleEditsRequestsToItsHostOnly() async throws {
            let session = try session("""
                {"action": "header", "host": "www.example.test", "set": {"X-Client": "hostpin"}, "remove": ["X-Secret"]}
                """)
            defer { PinnedLab.reinstall() }
            var request = URLRequest(url: try PinnedLab.url("www.example.test", "/headers"))
            request.setValue("s3cret", forHTTPHeaderField: "X-Secret")
            request.setValue("kept", forHTTPHeaderField: "X-App")
            let (data, _) = try await session.data(for: request)
            let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
            #expect(lines.contains("X-Client: hostpin"))
            #expect(lines.contains("X-App: kept"))
            #expect(!lines.contains { $0.lowercased().hasPrefix("x-secret:") }, "\(lines)")
            let target = try PinnedLab.url("cdn.example.test", "/headers")
            request.url = try PinnedLab.url("www.example.test", "/redirect/302?to=\(target.absoluteString)")
            let (hopped, response) = try await session.data(for: request)
            let hopLines = String(decoding: hopped, as: UTF8.self).split(separator: "\n").map(String.init)
            #expect(response.url == target)
            #expect(hopLines.contains("Host: cdn.example.test:\(port)"))
            #expect(hopLines.contains("X-App: kept"))
            #expect(hopLines.contains("X-Secret: s3cret"))
            #expect(!hopLines.contains { $0.lowercased().hasPrefix("x-client:") }, "\(hopLines)")
        }

        /// nx.example.test does not exist upstream (NXDOMAIN): pinned, it reaches www's address, and the
        /// resolver is never asked. Over HTTPS, a pin for cdn (whose DNS answer is 127.0.0.11) reaches www's
        /// address, with the certificate still checked against the name cdn.example.test.
        @Test func pinSendsANameToItsAddressesWithoutAskingTheResolver() async throws {
            let session = try session("""
                {"action": "pin", "host": "nx.example.test", "addresses": ["127.0.0.10"]},
                {"action": "pin", "host": "cdn.example.test", "addresses": ["127.0.0.10"]}
                """)
            defer { PinnedLab.reinstall() }
            let resolver = try #require(PinnedLab.resolver)
            let before = (resolver.count("nx.example.test"), resolver.count("cdn.example.test"))
            let url = try PinnedLab.url("nx.example.test", "/whoami")
            let (data, response) = try await session.data(from: url)
            #expect(String(decoding: data, as: UTF8.self) == "origin=www host=nx.example.test:\(port)\n")
            #expect(response.url == url)
            let secure = try PinnedLab.url("cdn.example.test", "/whoami", scheme: "https")
            let (secureData, _) = try await session.data(from: secure)
            #expect(String(decoding: secureData, as: UTF8.self) == "origin=www host=cdn.example.test:\(lab.httpsPort)\n")
            #expect(resolver.count("nx.example.test") == before.0)
            #expect(resolver.count("cdn.example.test") == before.1)
        }

        /// A pass rule makes the interceptor decline the request, so URLSession's own HTTP (and the
        /// system's resolver) would take it; the request is not sent here: tests must not use the
        /// system's resolver.
        @Test func passRuleMakesTheInterceptorDeclineTheRequest() throws {
            _ = try session("{\"action\": \"pass\", \"host\": \"intranet.example.test\"}")
            defer { PinnedLab.reinstall() }
            for url in ["http://intranet.example.test/", "https://INTRANET.example.test:8443/x"] {
                #expect(!PinnedURLProtocol.canInit(with: URLRequest(url: try #require(URL(string: url)))), "\(url)")
            }
            #expect(PinnedURLProtocol.canInit(with: URLRequest(url: try #require(URL(string: "http://www.example.test/")))))
            #expect(PinnedURLProtocol.canInit(with: URLRequest(url: try #require(URL(string: "http://a.intranet.example.test/")))))
        }

        @Test func firstMatchingRuleWins() async throws {
            let session = try session("""
                {"action": "respond", "url": "http://www.example.test:PORT/logo.png", "body": "local"},
                {"action": "block", "host": "www.example.test", "path": "/*.png"},
                {"action": "header", "host": "www.example.test", "set": {"X-Rule": "3"}}
                """)
            defer { PinnedLab.reinstall() }
            let (local, _) = try await session.data(from: try PinnedLab.url("www.example.test", "/logo.png"))
            #expect(String(decoding: local, as: UTF8.self) == "local")
            let error = await #expect(throws: URLError.self) {
                try await session.data(from: try PinnedLab.url("www.example.test", "/other.png"))
            }
            #expect(error?.localizedDescription == "blocked by rules[1] (block host www.example.test path /*.png)")
            let (headers, _) = try await session.data(from: try PinnedLab.url("www.example.test", "/headers"))
            #expect(String(decoding: headers, as: UTF8.self).split(separator: "\n").contains("X-Rule: 3"))
        }

        /// Loops the load-time check cannot see (it follows one example URL per rule: /ax and /xz here,
        /// which lead nowhere) end at the hop limit.
        @Test func transparentRedirectLoopEndsWithTooManyRedirects() async throws {
            let session = try session("""
                {"action": "redirect", "host": "a.example.test", "path": "/a*", "to": "b.example.test"},
                {"action": "redirect", "host": "b.example.test", "path": "*z", "to": "a.example.test"}
                """)
            defer { PinnedLab.reinstall() }
            let url = try PinnedLab.url("a.example.test", "/az")
            let error = await #expect(throws: URLError.self) { try await session.data(from: url) }
            #expect(error?.code == .httpTooManyRedirects)
            #expect(error?.localizedDescription.hasPrefix("the rules redirected \(url.absoluteString) more than 16 times") == true)
        }

        @Test func transparentTargetIsDecidedAgain() async throws {
            let session = try session("""
                {"action": "redirect", "url": "http://www.example.test:PORT/tracker.js", "to": "http://ads.example.test:PORT/t.js"},
                {"action": "block", "host": "ads.example.test"}
                """)
            defer { PinnedLab.reinstall() }
            let error = await #expect(throws: URLError.self) {
                try await session.data(from: try PinnedLab.url("www.example.test", "/tracker.js"))
            }
            #expect(error?.localizedDescription == "blocked by rules[1] (block host ads.example.test)")
        }
    }
}
