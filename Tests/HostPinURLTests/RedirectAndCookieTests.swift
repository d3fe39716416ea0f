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
