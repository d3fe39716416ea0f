import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin
import HostPinTestSupport
import HostPinURL
import Synchronization
import Testing

extension InterceptorTests {
    /// Bodies out, bodies back, cancellation and failover, over both transports, against the lab's origin app.
    @Suite struct BodyAndStreamingTests {
        let lab: Lab
        let port: UInt16

        init() throws {
            lab = try Lab.current()
            port = lab.httpPort
        }

        /// The lab's /echo line for `body`, computed with sha256sum from coreutils.
        func echoLine(origin: String, host: String, method: String, body: Data) async throws -> String {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-body-\(UUID().uuidString)")
            try body.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let digest = try await ProcessRunner.run("/usr/bin/sha256sum", [file.path]).standardOutput.prefix(64)
            return "origin=\(origin) host=\(host) method=\(method) length=\(body.count) sha256=\(digest)\n"
        }

        @Test(arguments: ["www.example.test", "v6only.example.test"])
        func postBodyReachesTheOriginUnchanged(host: String) async throws {
            let session = try PinnedLab.session()
            var request = URLRequest(url: try PinnedLab.url(host, "/echo"))
            request.httpMethod = "POST"
            let body = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            request.httpBody = body
            let (data, response) = try await session.data(for: request)
            let origin = host.hasPrefix("v6") ? "v6" : "www"
            let expected = try await echoLine(origin: origin, host: "\(host):\(port)", method: "POST", body: body)
            #expect(String(decoding: data, as: UTF8.self) == expected)
            #expect(response.url == request.url)
        }

        @Test(arguments: ["www.example.test", "v6only.example.test"])
        func multiChunkBodyReachesACompletionHandlerWhole(host: String) async throws {
            // Several didLoad calls: a completion-handler task must still get every byte.
            let session = try PinnedLab.session()
            let (data, _) = try await session.data(from: try PinnedLab.url(host, "/bytes/3000000"))
            #expect(data.count == 3_000_000)
            #expect(data.enumerated().allSatisfy { $0.element == UInt8($0.offset % 251) })
        }

        @Test(arguments: ["www.example.test", "v6only.example.test"])
        func multiChunkBodyReachesACompletionHandlerWholeBesideADataDelegate(host: String) async throws {
            // The session's data delegate makes the interceptor ask the task's behaviour (by reflection):
            // the completion handler must still get every byte, not the last chunk.
            let session = try PinnedLab.session(delegate: DataCollector(keepingData: false))
            let (data, _) = try await session.data(from: try PinnedLab.url(host, "/bytes/3000000"))
            #expect(data.count == 3_000_000)
            #expect(data.enumerated().allSatisfy { $0.element == UInt8($0.offset % 251) })
        }

        @Test func delegateReceivesTheBodyAsItArrives() async throws {
            let collector = DataCollector()
            let session = try PinnedLab.session(delegate: collector)
            let task = session.dataTask(with: try PinnedLab.url("www.example.test", "/drip/3/150"))
            task.resume()
            let result = await collector.result()
            #expect(result.error == nil)
            #expect(result.chunks.map(\.count).reduce(0, +) == 3)
            #expect(result.chunks.count >= 2)  // bytes dripped 150 ms apart arrive as separate chunks
            #expect(result.response?.url == task.originalRequest?.url)
        }

        @Test(arguments: ["www.example.test", "v6only.example.test"])
        func cancelStopsTheTransferPromptly(host: String) async throws {
            let collector = DataCollector()
            let session = try PinnedLab.session(delegate: collector)
            let task = session.dataTask(with: try PinnedLab.url(host, "/slow/10000"))
            task.resume()
            try await Task.sleep(for: .milliseconds(300))
            let clock = ContinuousClock()
            let start = clock.now
            task.cancel()
            let result = await collector.result()
            #expect((result.error as? URLError)?.code == .cancelled)
            #expect(clock.now - start < .seconds(3))  // the body was 10 s away
        }

        @Test(arguments: [("www.example.test", "http"), ("v6only.example.test", "http"), ("www.example.test", "https")])
        func timeoutIntervalIsHonoured(host: String, scheme: String) async throws {
            var request = URLRequest(url: try PinnedLab.url(host, "/slow/10000", scheme: scheme))
            request.timeoutInterval = 1
            let clock = ContinuousClock()
            let start = clock.now
            let error = await #expect(throws: URLError.self) { try await PinnedLab.session().data(for: request) }
            #expect(error?.code == .timedOut)
            #expect(clock.now - start < .seconds(6))  // the body was 10 s away
        }

        @Test func unreachableFirstAddressFailsOverToTheNext() async throws {
            // multi.example.test: 127.0.0.12 (nothing listens) then 127.0.0.10.
            let session = try PinnedLab.session()
            let (data, _) = try await session.data(from: try PinnedLab.url("multi.example.test", "/whoami"))
            #expect(String(decoding: data, as: UTF8.self) == "origin=www host=multi.example.test:\(port)\n")
        }

        @Test func noAddressConnectingIsCannotConnectToHost() async throws {
            // 127.0.0.12 has no listener: every address refuses.
            let only = try TrustedResolver(configuration: .lab([lab.trustedDNS]))
            let session = URLSession(configuration: .pinned(resolver: OnlyFirstAddress(only), base: .ephemeral))
            defer { PinnedLab.reinstall() }
            let error = await #expect(throws: URLError.self) {
                try await session.data(from: try PinnedLab.url("multi.example.test", "/whoami"))
            }
            #expect(error?.code == .cannotConnectToHost)
        }
    }
}

/// Keeps only the first address of each resolution (for multi.example.test: the dead one).
struct OnlyFirstAddress: HostResolver {
    let inner: any HostResolver

    init(_ inner: any HostResolver) {
        self.inner = inner
    }

    func resolve(_ name: HostName, family: AddressFamily) async throws(ResolutionError) -> Resolution {
        let full = try await inner.resolve(name, family: family)
        return Resolution(name: full.name, addresses: Array(full.addresses.prefix(1)), cnames: full.cnames,
                          upstream: full.upstream, source: full.source, receivedAt: full.receivedAt)
    }
}
