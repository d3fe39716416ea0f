import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin
import HostPinTestSupport
@testable import HostPinURL
import Synchronization
import Testing

extension InterceptorTests {
    /// Redirects followed by the interceptor itself, and cookies filed under each hop's original host.
    @Suite struct RedirectAndCookieTests {
        let lab: Lab

        init() throws {
            lab = try Lab.current()
        }

        func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

        @Test(arguments: ["http", "https"])
        func crossHostRedirectIsResolvedAndPinnedOnItsOwn(scheme: String) async throws {
            let session = try PinnedLab.session()
            let target = try PinnedLab.url("cdn.example.test", "/whoami", scheme: scheme)
            let start = try PinnedLab.url("www.example.test", "/redirect/302?to=\(target.absoluteString)", scheme: scheme)
            let (data, response) = try await session.data(from: start)
            let port = scheme == "https" ? lab.httpsPort : lab.httpPort
            #expect(text(data) == "origin=cdn host=cdn.example.test:\(port)\n")
            #expect(response.url == target)
        }

        @Test func relativeRedirectStaysOnTheHost() async throws {
            let session = try PinnedLab.session()
            let (data, response) = try await session.data(from: try PinnedLab.url("www.example.test", "/redirect-chain/3"))
            #expect(text(data) == "chain-end origin=www host=www.example.test:\(lab.httpPort) method=GET\n")
            #expect(response.url == (try PinnedLab.url("www.example.test", "/redirect-chain/0")))
        }

        @Test(arguments: [(303, "GET", 0), (302, "GET", 0), (307, "POST", 5), (308, "POST", 5)])
        func methodAndBodyFollowURLSessionRules(status: Int, method: String, length: Int) async throws {
            let session = try PinnedLab.session()
            var request = URLRequest(url: try PinnedLab.url("www.example.test", "/redirect/\(status)?to=/echo"))
            request.httpMethod = "POST"
            request.httpBody = Data("hello".utf8)
            let (data, _) = try await session.data(for: request)
            #expect(text(data).hasPrefix("origin=www host=www.example.test:\(lab.httpPort) method=\(method) length=\(length) "))
        }

        @Test func redirectLoopEndsAtTheHopLimit() async throws {
            let session = try PinnedLab.session(redirects: .follow(maxHops: 3))
            defer { PinnedLab.reinstall() }
            let error = await #expect(throws: URLError.self) {
                try await session.data(from: try PinnedLab.url("www.example.test", "/redirect-chain/5"))
            }
            #expect(error?.code == .httpTooManyRedirects)
        }

        @Test func doNotFollowHandsTheRedirectToTheClient() async throws {
            let session = try PinnedLab.session(redirects: .doNotFollow)
            defer { PinnedLab.reinstall() }
            let url = try PinnedLab.url("www.example.test", "/redirect/302?to=/whoami")
            let (data, response) = try await session.data(from: url)
            let http = try #require(response as? HTTPURLResponse)
            #expect(http.statusCode == 302)
            #expect(http.value(forHTTPHeaderField: "Location") == "/whoami")
            #expect(http.url == url)
            #expect(text(data) == "redirect\n")
        }

        @Test func decidePolicySeesEachHopAndCanStop() async throws {
            let seen = HopLog()
            let session = try PinnedLab.session(redirects: .decide { response, proposed in
                seen.append("\(response.statusCode) \(proposed.url?.path ?? "")")
                return proposed.url?.path == "/redirect-chain/1" ? nil : proposed
            })
            defer { PinnedLab.reinstall() }
            let (_, response) = try await session.data(from: try PinnedLab.url("www.example.test", "/redirect-chain/3"))
            #expect((response as? HTTPURLResponse)?.statusCode == 302)
            #expect(seen.entries == ["302 /redirect-chain/2", "302 /redirect-chain/1"])
        }

        @Test func cookiesRoundTripOnTheirHostAndStayThere() async throws {
            let configuration = URLSessionConfiguration.ephemeral
            let storage = try #require(configuration.httpCookieStorage)
            let session = try PinnedLab.session(base: configuration)
            defer { PinnedLab.reinstall() }
            _ = try await session.data(from: try PinnedLab.url("www.example.test", "/cookies/set?session=abc"))
            let cookies = storage.cookies ?? []
            #expect(cookies.map(\.name) == ["session"])
            #expect(cookies.first?.domain == "www.example.test")  // never an IP
            let (back, _) = try await session.data(from: try PinnedLab.url("www.example.test", "/cookies"))
            #expect(text(back) == "cookie=session=abc\n")
            let (cdn, _) = try await session.data(from: try PinnedLab.url("cdn.example.test", "/cookies"))
            #expect(text(cdn) == "cookie=\n")
        }

        @Test func redirectHopGetsItsOwnHostsCookiesOnly() async throws {
            let configuration = URLSessionConfiguration.ephemeral
            let session = try PinnedLab.session(base: configuration)
            defer { PinnedLab.reinstall() }
            _ = try await session.data(from: try PinnedLab.url("www.example.test", "/cookies/set?www=1"))
            _ = try await session.data(from: try PinnedLab.url("cdn.example.test", "/cookies/set?cdn=2"))
            let cdnCookies = try PinnedLab.url("cdn.example.test", "/cookies")
            let (data, _) = try await session.data(from: try PinnedLab.url(
                "www.example.test", "/redirect/302?to=\(cdnCookies.absoluteString)"))
            #expect(text(data) == "cookie=cdn=2\n")
        }

        @Test func redirectToAnotherSchemeIsRefusedWhenFollowing() async throws {
            let session = try PinnedLab.session()
            let error = await #expect(throws: URLError.self) {
                try await session.data(from: try PinnedLab.url("www.example.test", "/redirect/302?to=file:///etc/passwd"))
            }
            #expect(error?.code == .unsupportedURL)
        }

        @Test func redirectToAnIPv6LiteralIsFollowed() async throws {
            let session = try PinnedLab.session()
            let target = "http://[::1]:\(lab.httpPort)/whoami"
            let (data, _) = try await session.data(from: try PinnedLab.url("www.example.test", "/redirect/302?to=\(target)"))
            #expect(text(data) == "origin=v6 host=[::1]:\(lab.httpPort)\n")
        }

        /// A request with the application's own `Cookie` and `Authorization`, to `url`.
        func withCredentials(_ url: URL) -> URLRequest {
            var request = URLRequest(url: url)
            request.setValue("sid=1", forHTTPHeaderField: "Cookie")
            request.setValue("Bearer x", forHTTPHeaderField: "Authorization")
            return request
        }

        /// The request header lines `/headers` echoed.
        func headerLines(_ data: Data) -> [String] { text(data).split(separator: "\n").map(String.init) }

        @Test(arguments: ["http", "https"])
        func ownCookieAndAuthorizationStayOnASameHostHop(scheme: String) async throws {
            let session = try PinnedLab.session(base: .ephemeral)
            defer { PinnedLab.reinstall() }
            let start = try PinnedLab.url("www.example.test", "/redirect/302?to=/headers", scheme: scheme)
            let (data, response) = try await session.data(for: withCredentials(start))
            #expect(response.url == (try PinnedLab.url("www.example.test", "/headers", scheme: scheme)))
            let lines = headerLines(data)
            #expect(lines.contains("Cookie: sid=1"))
            #expect(lines.contains("Authorization: Bearer x"))
        }

        /// Another host, or the same host under another scheme and port: neither header follows.
        @Test(arguments: [("cdn.example.test", "http"), ("cdn.example.test", "https"), ("www.example.test", "https")])
        func ownCookieAndAuthorizationDoNotCrossToAnotherOrigin(host: String, scheme: String) async throws {
            let session = try PinnedLab.session(base: .ephemeral)
            defer { PinnedLab.reinstall() }
            let target = try PinnedLab.url(host, "/headers", scheme: scheme)
            let start = try PinnedLab.url("www.example.test", "/redirect/302?to=\(target.absoluteString)")
            let (data, response) = try await session.data(for: withCredentials(start))
            #expect(response.url == target)
            let lines = headerLines(data)
            #expect(lines.contains("Host: \(target.host ?? ""):\(target.port ?? 0)"))
            #expect(!lines.contains { $0.hasPrefix("Cookie:") || $0.hasPrefix("Authorization:") }, "\(lines)")
        }

        /// curl's rule: the application's credentials belong to the first request's origin, so a hop
        /// back to it carries them again.
        @Test func ownCookieAndAuthorizationReturnWithAHopBackToTheFirstOrigin() async throws {
            let session = try PinnedLab.session(base: .ephemeral)
            defer { PinnedLab.reinstall() }
            let back = try PinnedLab.url("www.example.test", "/headers")
            let away = try PinnedLab.url("cdn.example.test", "/redirect/302?to=\(back.absoluteString)")
            let start = try PinnedLab.url("www.example.test", "/redirect/302?to=\(away.absoluteString)")
            let (data, response) = try await session.data(for: withCredentials(start))
            #expect(response.url == back)
            let lines = headerLines(data)
            #expect(lines.contains("Cookie: sid=1"))
            #expect(lines.contains("Authorization: Bearer x"))
        }

        /// The storage's cookies in the first request are the session's, not the application's: a
        /// same-host hop gets them from the storage again, once.
        @Test func sameHostHopSendsTheStoragesCookiesOnce() async throws {
            let session = try PinnedLab.session(base: .ephemeral)
            defer { PinnedLab.reinstall() }
            _ = try await session.data(from: try PinnedLab.url("www.example.test", "/cookies/set?www=1"))
            let (data, _) = try await session.data(from: try PinnedLab.url("www.example.test", "/redirect/302?to=/cookies"))
            #expect(text(data) == "cookie=www=1\n")
        }

        /// Across hosts the application's Cookie stays behind while the storage's cookies for the new
        /// host go along.
        @Test func crossHostHopGetsTheStoragesCookiesButNotTheOwnCookie() async throws {
            let session = try PinnedLab.session(base: .ephemeral)
            defer { PinnedLab.reinstall() }
            _ = try await session.data(from: try PinnedLab.url("cdn.example.test", "/cookies/set?cdn=2"))
            let cdnCookies = try PinnedLab.url("cdn.example.test", "/cookies")
            let start = try PinnedLab.url("www.example.test", "/redirect/302?to=\(cdnCookies.absoluteString)")
            let (data, _) = try await session.data(for: withCredentials(start))
            #expect(text(data) == "cookie=cdn=2\n")
        }

        @Test func nextRequestDropsCredentialsAcrossHosts() throws {
            let url = try #require(URL(string: "http://www.example.test/a"))
            var request = URLRequest(url: url)
            request.setValue("www.example.test", forHTTPHeaderField: "Host")
            request.setValue("Bearer x", forHTTPHeaderField: "Authorization")
            request.setValue("a=1", forHTTPHeaderField: "Cookie")
            let redirect = try #require(HTTPURLResponse(url: url, statusCode: 307, httpVersion: nil,
                                                        headerFields: ["Location": "http://cdn.example.test/b"]))
            let next = try #require(try Redirect.next(after: redirect, to: request))
            #expect(next.url?.absoluteString == "http://cdn.example.test/b")
            #expect(next.value(forHTTPHeaderField: "Host") == nil)
            #expect(next.value(forHTTPHeaderField: "Authorization") == nil)
            #expect(next.value(forHTTPHeaderField: "Cookie") == nil)
        }
    }
}

/// Records what a redirect decision saw.
final class HopLog: Sendable {
    private let log = Mutex<[String]>([])
    func append(_ entry: String) { log.withLock { $0.append(entry) } }
    var entries: [String] { log.withLock { $0 } }
}
