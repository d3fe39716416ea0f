import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin
import HostPinTestSupport
import HostPinURL
import Testing

extension InterceptorTests {
    /// Every way a URLSession request carries a body, over the inner URLSession (www, IPv4 http) and
    /// libcurl (v6only over http, www over https), checked by length and SHA-256 at the origin.
    @Suite struct RequestBodyTests {
        let lab: Lab
        static let body = Data((0..<(10 * 1024 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) })
        static let digest: String = {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-10mib-\(getpid())")
            try? body.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            return String((try? ProcessRunner.run("/usr/bin/sha256sum", [file.path]))?.standardOutput.prefix(64) ?? "")
        }()

        init() throws {
            lab = try Lab.current()
        }

        static let targets: [(String, String)] = [("www.example.test", "http"), ("v6only.example.test", "http"),
                                                  ("www.example.test", "https")]

        func expectEchoed(_ data: Data, host: String, scheme: String, method: String = "POST") {
            let port = scheme == "https" ? lab.httpsPort : lab.httpPort
            let origin = host.hasPrefix("v6") ? "v6" : "www"
            #expect(String(decoding: data, as: UTF8.self)
                == "origin=\(origin) host=\(host):\(port) method=\(method) length=\(Self.body.count) sha256=\(Self.digest)\n")
        }

        func request(_ host: String, _ scheme: String) throws -> URLRequest {
            var request = URLRequest(url: try PinnedLab.url(host, "/echo", scheme: scheme))
            request.httpMethod = "POST"
            return request
        }

        @Test(arguments: targets)
        func httpBodyOfTenMebibytes(host: String, scheme: String) async throws {
            var request = try request(host, scheme)
            request.httpBody = Self.body
            let (data, _) = try await PinnedLab.session().data(for: request)
            expectEchoed(data, host: host, scheme: scheme)
        }

        @Test(arguments: targets)
        func httpBodyStreamIsStreamed(host: String, scheme: String) async throws {
            var request = try request(host, scheme)
            request.httpBodyStream = InputStream(data: Self.body)
            let (data, _) = try await PinnedLab.session().data(for: request)
            expectEchoed(data, host: host, scheme: scheme)
        }

        @Test(arguments: targets)
        func uploadTaskFromData(host: String, scheme: String) async throws {
            let (data, _) = try await PinnedLab.session().upload(for: try request(host, scheme), from: Self.body)
            expectEchoed(data, host: host, scheme: scheme)
        }

        @Test(arguments: targets)
        func uploadTaskFromFile(host: String, scheme: String) async throws {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-upload-\(UUID().uuidString)")
            try Self.body.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let (data, _) = try await PinnedLab.session().upload(for: try request(host, scheme), fromFile: file)
            expectEchoed(data, host: host, scheme: scheme)
        }

        @Test func streamedRequestUploadWithoutAStreamFailsInsteadOfSendingNoBody() async throws {
            let collector = DataCollector()
            let session = try PinnedLab.session(delegate: collector)
            session.uploadTask(withStreamedRequest: try request("www.example.test", "http")).resume()
            let result = await collector.result()
            let error = try #require(result.error as? URLError)
            #expect(error.code == .requestBodyStreamExhausted)
            #expect(error.localizedDescription.contains("use a data task with URLRequest.httpBody or httpBodyStream"))
        }

        @Test func streamBodyCannotBeRepeatedBy307() async throws {
            var request = URLRequest(url: try PinnedLab.url("www.example.test", "/redirect/307?to=/echo"))
            request.httpMethod = "POST"
            request.httpBodyStream = InputStream(data: Data("once".utf8))
            let error = await #expect(throws: URLError.self) { try await PinnedLab.session().data(for: request) }
            #expect(error?.code == .requestBodyStreamExhausted)
        }
    }
}
