import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin
import HostPinTestSupport
import HostPinURL
import Testing

extension InterceptorTests {
    /// Names with A and AAAA addresses through the interceptor: IPv6 first (RFC 8305 §4), and one transfer
    /// that falls back to IPv4 when the IPv6 address cannot be reached. (The black-holed cases, where the
    /// 250 ms stagger matters, run in a network namespace: `HappyEyeballsBlackHoleTests`.)
    @Suite struct HappyEyeballsInterceptorTests {
        let port: UInt16

        init() throws {
            port = try Lab.current().httpPort
        }

        @Test(arguments: [("http", PinnedURLProtocol.PlainHTTPTransport.urlSession), ("http", .libcurl), ("https", .urlSession)])
        func nameWithBothFamiliesGoesToIPv6First(_ scheme: String, _ plainHTTP: PinnedURLProtocol.PlainHTTPTransport) async throws {
            let session = try PinnedLab.session(plainHTTP: plainHTTP)
            let url = try PinnedLab.url("dual.example.test", "/whoami", scheme: scheme)
            let (data, response) = try await session.data(from: url)
            let authority = "dual.example.test:\(url.port ?? 0)"
            #expect(String(decoding: data, as: UTF8.self) == "origin=v6 host=\(authority)\n")
            #expect(response.url == url)
        }

        /// The pinned IPv6 address refuses (an IPv4-mapped address where nothing listens): the same
        /// transfer connects to the IPv4 address instead.
        @Test(arguments: ["http", "https"])
        func refusedIPv6FallsBackToIPv4(_ scheme: String) async throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-he-\(UUID().uuidString).json")
            defer { try? FileManager.default.removeItem(at: folder) }
            try Data("""
                {"rules": [{"action": "pin", "host": "dual.example.test", "addresses": ["127.0.0.10", "::ffff:127.0.0.12"]}]}
                """.utf8).write(to: folder)
            let session = try PinnedLab.session(rules: try Rules(contentsOf: folder))
            defer { PinnedLab.reinstall() }
            let url = try PinnedLab.url("dual.example.test", "/whoami", scheme: scheme)
            let (data, _) = try await session.data(from: url)
            #expect(String(decoding: data, as: UTF8.self) == "origin=www host=dual.example.test:\(url.port ?? 0)\n")
        }
    }
}
