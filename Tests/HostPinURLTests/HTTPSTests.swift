import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin
import HostPinTestSupport
import HostPinURL
import Testing

extension InterceptorTests {
    /// Pinned HTTPS against the lab's nginx: the connection goes to the pinned address while SNI and the
    /// certificate check use the original name.
    @Suite struct HTTPSTests {
        let lab: Lab
        let port: UInt16

        init() throws {
            lab = try Lab.current()
            port = lab.httpsPort
        }

        @Test(arguments: [
            ("www.example.test", "www"),
            ("cdn.example.test", "cdn"),
            ("v6only.example.test", "v6"),
            ("multi.example.test", "www"),  // first address refuses: failover
            ("bücher.example.test", "www"),
        ])
        func getIsPinnedAndVerifiedAgainstTheName(host: String, origin: String) async throws {
            let session = try PinnedLab.session()
            let url = try PinnedLab.url(host, "/whoami", scheme: "https")
            let (data, response) = try await session.data(from: url)
            let http = try #require(response as? HTTPURLResponse)
            let wireHost = try HostName.parse(host).text
            #expect(http.statusCode == 200)
            #expect(String(decoding: data, as: UTF8.self) == "origin=\(origin) host=\(wireHost):\(port)\n")
            #expect(http.url == url)
        }

        @Test func withoutTheLabCATheCertificateIsUntrusted() async throws {
            let resolver = try #require(PinnedLab.resolver)
            let session = URLSession(configuration: .pinned(resolver: resolver, base: .ephemeral))
            defer { PinnedLab.reinstall() }
            let error = await #expect(throws: URLError.self) {
                try await session.data(from: try PinnedLab.url("www.example.test", "/whoami", scheme: "https"))
            }
            #expect(error?.code == .serverCertificateUntrusted)
        }

        @Test func certificateForAnotherNameIsRejectedWithoutRetry() async throws {
            // wrongcert.example.test → 127.0.0.66, whose certificate (from the trusted lab CA) names
            // hijacker.invalid only.
            let session = try PinnedLab.session()
            let error = await #expect(throws: URLError.self) {
                try await session.data(from: try PinnedLab.url("wrongcert.example.test", "/whoami", scheme: "https"))
            }
            #expect(error?.code == .serverCertificateUntrusted)
        }

        @Test(arguments: ["localhost", "127.0.0.1", "[::1]"])
        func literalAndLocalhostHTTPSUseTheExtraCAFile(host: String) async throws {
            // No resolution needed, but libcurl (with the lab CA) still makes the connection.
            let session = try PinnedLab.session()
            let (data, _) = try await session.data(from: try PinnedLab.url(host, "/whoami", scheme: "https"))
            #expect(String(decoding: data, as: UTF8.self).hasPrefix("origin="))
            #expect(String(decoding: data, as: UTF8.self).hasSuffix(" host=\(host):\(port)\n"))
        }

        @Test func upperCaseSchemeIsPinned() async throws {
            let session = try PinnedLab.session()
            let url = try #require(URL(string: "HTTP://www.example.test:\(lab.httpPort)/whoami"))
            let (data, _) = try await session.data(from: url)
            #expect(String(decoding: data, as: UTF8.self) == "origin=www host=www.example.test:\(lab.httpPort)\n")
        }

        @Test func tlsToAPlainHTTPServerIsSecureConnectionFailed() async throws {
            let session = try PinnedLab.session()
            let url = try #require(URL(string: "https://www.example.test:\(lab.httpPort)/whoami"))
            let error = await #expect(throws: URLError.self) { try await session.data(from: url) }
            #expect(error?.code == .secureConnectionFailed)
        }

        @Test func cancelStopsAnHTTPSTransfer() async throws {
            let collector = DataCollector()
            let session = try PinnedLab.session(delegate: collector)
            let task = session.dataTask(with: try PinnedLab.url("www.example.test", "/slow/10000", scheme: "https"))
            task.resume()
            try await Task.sleep(for: .milliseconds(300))
            task.cancel()
            let result = await collector.result()
            #expect((result.error as? URLError)?.code == .cancelled)
        }

        @Test func postBodyReachesTheOriginOverHTTPS() async throws {
            let session = try PinnedLab.session()
            var request = URLRequest(url: try PinnedLab.url("www.example.test", "/echo", scheme: "https"))
            request.httpMethod = "PUT"
            request.httpBody = Data("hello over tls".utf8)
            let (data, _) = try await session.data(for: request)
            let digest = await Self.sha256Hex("hello over tls")
            #expect(String(decoding: data, as: UTF8.self) == "origin=www host=www.example.test:\(port) method=PUT length=14 "
                + "sha256=\(digest)\n")
        }

        @Test func responseHeadersArriveUnderTheOriginalURL() async throws {
            let session = try PinnedLab.session()
            let url = try PinnedLab.url("www.example.test", "/status/418", scheme: "https")
            let (data, response) = try await session.data(from: url)
            let http = try #require(response as? HTTPURLResponse)
            #expect(http.statusCode == 418)
            #expect(http.value(forHTTPHeaderField: "X-Lab-Origin") == "www")
            #expect(String(decoding: data, as: UTF8.self) == "status=418\n")
        }

        static func sha256Hex(_ text: String) async -> String {
            let result = try? await ProcessRunner.run("/usr/bin/sha256sum", [], input: text)
            return String(result?.standardOutput.prefix(64) ?? "")
        }
    }
}
