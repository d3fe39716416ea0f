import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin
import HostPinTestSupport
@testable import HostPinURL
import Testing

extension InterceptorTests {
    /// The interceptor against the lab's real nginx origins. Serialized: the resolver is process-wide
    /// and some tests count what it was asked.
    @Suite struct PinnedURLProtocolTests {
        let lab: Lab
        let port: UInt16

        init() throws {
            lab = try Lab.current()
            port = lab.httpPort
        }

        @Test func getReachesTheTrustedOriginWithOriginalHostAndURL() async throws {
            let session = try PinnedLab.session()
            let url = try PinnedLab.url("www.example.test", "/whoami")
            let (data, response) = try await session.data(from: url)
            let http = try #require(response as? HTTPURLResponse)
            #expect(http.statusCode == 200)
            #expect(String(decoding: data, as: UTF8.self) == "origin=www host=www.example.test:\(port)\n")
            #expect(http.url == url)
        }

        @Test func plainHTTPThroughLibcurlKeepsTheHostAndURL() async throws {
            let session = try PinnedLab.session(plainHTTP: .libcurl)
            defer { PinnedLab.reinstall() }
            let url = try PinnedLab.url("www.example.test", "/whoami")
            let (data, response) = try await session.data(from: url)
            #expect(String(decoding: data, as: UTF8.self) == "origin=www host=www.example.test:\(port)\n")
            #expect(response.url == url)
        }

        @Test func completionHandlerTaskCompletesOffFoundationsQueue() async throws {
            // startLoading runs on FoundationNetworking's work queue; resuming an inner task there traps.
            let session = try PinnedLab.session()
            let url = try PinnedLab.url("cdn.example.test", "/whoami")
            let body: String = try await withCheckedThrowingContinuation { continuation in
                session.dataTask(with: url) { data, _, error in
                    if let error { continuation.resume(throwing: error) }
                    else { continuation.resume(returning: String(decoding: data ?? Data(), as: UTF8.self)) }
                }.resume()
            }
            #expect(body == "origin=cdn host=cdn.example.test:\(port)\n")
        }

        @Test func ipv6OnlyNameReachesTheV6OriginThroughABracketedAddress() async throws {
            let session = try PinnedLab.session()
            let url = try PinnedLab.url("v6only.example.test", "/whoami")
            let (data, response) = try await session.data(from: url)
            #expect(String(decoding: data, as: UTF8.self) == "origin=v6 host=v6only.example.test:\(port)\n")
            #expect(response.url == url)
        }

        @Test func pinnedRequestNamesTheAddressAndKeepsTheHost() throws {
            let original = URLRequest(url: try PinnedLab.url("v6only.example.test", "/whoami?a=b"))
            let address = try #require(IPAddress("::1"))
            let request = try #require(PinnedRequest(original))
            let addressed = try #require(request.addressed(to: address))
            #expect(addressed.url?.absoluteString == "http://[::1]:\(port)/whoami?a=b")
            #expect(addressed.value(forHTTPHeaderField: "Host") == "v6only.example.test:\(port)")
            let pinning = try #require(request.curlPinning(to: [address]))
            #expect(pinning.connectTo == "::[::1]:\(port)" && pinning.resolve == nil)
            let literalURL = try #require(URL(string: "http://[::1]:\(port)/"))
            let literal = try #require(PinnedRequest(URLRequest(url: literalURL)))
            #expect(literal.curlPinning(to: [address]) == nil)
            #expect(PinnedRequest.hostHeader(host: "www.example.test", port: 80, scheme: "http") == "www.example.test")
            #expect(PinnedRequest.hostHeader(host: "www.example.test", port: nil, scheme: "http") == "www.example.test")
            #expect(PinnedRequest.hostHeader(host: "www.example.test", port: 8080, scheme: "http") == "www.example.test:8080")
        }

        @Test func innerRequestIsNotInterceptedAgain() async throws {
            // Registered globally, the protocol is consulted for the inner session's requests too.
            _ = URLProtocol.registerClass(PinnedURLProtocol.self)
            defer { URLProtocol.unregisterClass(PinnedURLProtocol.self) }
            let resolver = try #require(PinnedLab.resolver)
            let before = resolver.count("www.example.test")
            let session = try PinnedLab.session()
            let (data, _) = try await session.data(from: try PinnedLab.url("www.example.test", "/whoami"))
            #expect(String(decoding: data, as: UTF8.self) == "origin=www host=www.example.test:\(port)\n")
            #expect(resolver.count("www.example.test") - before == 1)
            let address = try #require(IPAddress("127.0.0.10"))
            let original = URLRequest(url: try PinnedLab.url("www.example.test", "/"))
            let inner = try #require(PinnedRequest(original)?.addressed(to: address))
            #expect(!PinnedURLProtocol.canInit(with: inner))
        }

        @Test(arguments: [
            ("http://www.example.test/", true),
            ("HTTP://www.example.test/", true),
            ("https://www.example.test/", true),
            ("http://127.0.0.10/", false),
            ("http://[::1]/", true),
            ("https://127.0.0.10/", true),
            ("https://localhost/", true),
            ("http://localhost/", false),
            ("ftp://www.example.test/", false),
        ])
        func interceptsHTTPAndHTTPSToNamesOnly(url: String, intercepted: Bool) throws {
            #expect(PinnedURLProtocol.canInit(with: URLRequest(url: try #require(URL(string: url)))) == intercepted)
        }

        @Test func nxdomainIsCannotFindHost() async throws {
            let session = try PinnedLab.session()
            let url = try PinnedLab.url("nx.example.test", "/whoami")
            let error = await #expect(throws: URLError.self) { try await session.data(from: url) }
            #expect(error?.code == .cannotFindHost)
            #expect(error?.failingURL == url)
        }

        @Test func nodataIsCannotFindHost() async throws {
            let resolver = try TrustedResolver(configuration: .lab([lab.trustedDNS]))
            let session = URLSession(configuration: .pinned(resolver: resolver, family: .v6, base: .ephemeral))
            defer { PinnedLab.reinstall() }
            let error = await #expect(throws: URLError.self) {
                try await session.data(from: try PinnedLab.url("www.example.test", "/whoami"))
            }
            #expect(error?.code == .cannotFindHost)
        }

        @Test func unreachableUpstreamIsDNSLookupFailed() async throws {
            let silent = try BlackHole()
            var configuration = TrustedResolver.Configuration.ownServer([silent.address])
            configuration.budget = .milliseconds(300)
            let session = URLSession(configuration: .pinned(resolver: try TrustedResolver(configuration: configuration),
                                                            base: .ephemeral))
            defer { PinnedLab.reinstall() }
            let error = await #expect(throws: URLError.self) {
                try await session.data(from: try PinnedLab.url("www.example.test", "/whoami"))
            }
            #expect(error?.code == .dnsLookupFailed)
        }
    }
}
