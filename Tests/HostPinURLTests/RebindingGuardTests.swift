import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin
import HostPinTestSupport
import HostPinURL
import Testing

extension InterceptorTests {
    /// The interceptor's DNS-rebinding guard (`allowPrivate: false`): every lab name resolves to a
    /// loopback address, which the guard refuses; IP literals and pin rules are never guarded. Each test
    /// installs its own setup (process-wide) and puts the plain one back afterwards.
    @Suite struct RebindingGuardTests {
        let lab: Lab

        init() throws {
            lab = try Lab.current()
        }

        private func session(allowPrivate: Bool, rules: Rules = Rules()) throws -> URLSession {
            let resolver = try #require(PinnedLab.resolver)
            return URLSession(configuration: .pinned(resolver: resolver, extraCAFile: lab.caFile, rules: rules,
                                                     allowPrivate: allowPrivate, base: .ephemeral))
        }

        @Test func guardRefusesANameResolvingToLoopback() async throws {
            let session = try session(allowPrivate: false)
            defer { PinnedLab.reinstall() }
            for scheme in ["http", "https"] {
                let url = try PinnedLab.url("www.example.test", "/whoami", scheme: scheme)
                let error = await #expect(throws: URLError.self) { try await session.data(from: url) }
                #expect(error?.code == .resourceUnavailable)
                #expect(error?.failingURL == url)
                #expect(error?.localizedDescription == "www.example.test resolves to 127.0.0.10, in special-purpose block "
                    + "127.0.0.0/8 (loopback, RFC 1122); private targets are not allowed.")
            }
        }

        /// The default keeps what the interceptor always did: private addresses are reachable.
        @Test func withoutTheGuardTheSameNameIsReached() async throws {
            let session = try session(allowPrivate: true)
            defer { PinnedLab.reinstall() }
            let (data, _) = try await session.data(from: try PinnedLab.url("www.example.test", "/whoami"))
            #expect(String(decoding: data, as: UTF8.self) == "origin=www host=www.example.test:\(lab.httpPort)\n")
            let (plain, _) = try await PinnedLab.session().data(from: try PinnedLab.url("www.example.test", "/whoami"))
            #expect(String(decoding: plain, as: UTF8.self) == "origin=www host=www.example.test:\(lab.httpPort)\n")
        }

        /// The guard is about what DNS answers: an IP literal is where the application asked to go, and a
        /// pin rule's addresses are the operator's.
        @Test func guardLetsLiteralsAndPinnedNamesThrough() async throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-guard-\(UUID().uuidString).json")
            defer { try? FileManager.default.removeItem(at: folder) }
            try Data(#"{"rules": [{"action": "pin", "host": "nx.example.test", "addresses": ["127.0.0.10"]}]}"#.utf8).write(to: folder)
            let session = try session(allowPrivate: false, rules: try Rules(contentsOf: folder))
            defer { PinnedLab.reinstall() }
            let (pinned, _) = try await session.data(from: try PinnedLab.url("nx.example.test", "/whoami"))
            #expect(String(decoding: pinned, as: UTF8.self) == "origin=www host=nx.example.test:\(lab.httpPort)\n")
            let (literal, _) = try await session.data(from: try #require(URL(string: "http://[::1]:\(lab.httpPort)/whoami")))
            #expect(String(decoding: literal, as: UTF8.self) == "origin=v6 host=[::1]:\(lab.httpPort)\n")
        }
    }
}
