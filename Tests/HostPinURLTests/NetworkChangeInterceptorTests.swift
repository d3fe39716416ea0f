import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin
import HostPinTestSupport
import HostPinURL
import Testing

extension InterceptorTests {
    /// `PinnedURLProtocol.networkChanged` (issue 30) closes the origin connections libcurl keeps: the
    /// request after it connects again (the observer lists an attempt), where the one before it reused
    /// the kept connection (no attempt).
    @Suite struct NetworkChangeInterceptorTests {
        @Test func requestAfterANetworkChangeOpensANewConnection() async throws {
            let log = EventLog()
            let session = try PinnedLab.session(observer: log.observer)
            defer { PinnedLab.reinstall() }
            let url = try PinnedLab.url("www.example.test", "/whoami", scheme: "https")
            // Connections kept by the suites before this one (HTTPSTests asks the same origin) go first:
            // else the first request reuses one (seen: [0, 0, 1] after HTTPSTests).
            PinnedURLProtocol.networkChanged()
            try await Task.sleep(for: .milliseconds(200))
            for _ in 0..<2 { _ = try await session.data(from: url) }
            PinnedURLProtocol.networkChanged()
            // The curl thread closes them once no transfer is in flight: at once here, on its next turn.
            try await Task.sleep(for: .milliseconds(200))
            _ = try await session.data(from: url)
            let attempts = log.all.map { $0.finalHop?.attempts.count ?? -1 }
            #expect(attempts == [1, 0, 1], "attempts per request: \(attempts)")
        }
    }
}
