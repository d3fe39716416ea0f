import CCurl
import Foundation
@testable import HostPin
import HostPinTestSupport
import Synchronization
import Testing

/// ``CurlThreads``: threads stopped and joined before the process exits, none started afterwards; and
/// the libcurl threads of HostPin (DoH, DoT, the probe's transfers) end when it stops them, even in the
/// middle of a TLS handshake that a server never answers. Each test has a registry of its own: the
/// process's one must keep running for the other tests.
@Suite struct CurlThreadsTests {
    /// `body` on a thread of its own: ``CurlThreads/shutDown(within:)`` blocks its caller, and a blocked
    /// thread of Swift's cooperative pool stalls the other tests.
    private func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    /// A flag threads share.
    private final class Flag: Sendable {
        private let value = Atomic<Bool>(false)
        func set() { value.store(true, ordering: .sequentiallyConsistent) }
        var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
    }

    /// A thread of `threads` that runs until it is stopped; its `ended` is set as it returns.
    private func startLooping(_ threads: CurlThreads) -> (started: Bool, ended: Flag) {
        let (stopped, ended) = (Flag(), Flag())
        let started = threads.start(name: "looping", stop: { stopped.set() }) {
            while !stopped.isSet { usleep(1000) }
            ended.set()
        }
        return (started, ended)
    }

    @Test func shutDownStopsEveryThreadAndWaitsUntilEachHasEnded() async {
        let threads = CurlThreads()
        let loops = (0..<3).map { _ in startLooping(threads) }
        #expect(loops.filter(\.started).count == 3)
        #expect(await offThePool { threads.shutDown(within: .seconds(30)) })
        #expect(loops.filter(\.ended.isSet).count == 3)
        #expect(threads.count == 0)
    }

    @Test func noThreadStartsOnceShutDownHasBegun() async {
        let threads = CurlThreads()
        #expect(await offThePool { threads.shutDown(within: .seconds(1)) })
        let ran = Flag()
        #expect(!threads.start(name: "late", stop: {}) { ran.set() })
        #expect(!ran.isSet)
        #expect(threads.count == 0)
    }

    @Test func threadThatOutlastsTheLimitMakesShutDownSaySoAndALaterCallWaitsForIt() async {
        let threads = CurlThreads()
        let release = DispatchSemaphore(value: 0)
        #expect(threads.start(name: "stubborn", stop: {}) { release.wait() })
        #expect(!(await offThePool { threads.shutDown(within: .milliseconds(100)) }))
        #expect(threads.count == 1)
        release.signal()
        #expect(await offThePool { threads.shutDown(within: .seconds(30)) })
        #expect(threads.count == 0)
    }

    /// An upstream at the stalled listener's port, `dns.example.test` bootstrapped to 127.0.0.1.
    private func stalledUpstream(dot: Bool, port: UInt16) throws -> EncryptedUpstream {
        var upstream = try EncryptedUpstream.parse(dot ? "tls://dns.example.test:\(port)" : "https://dns.example.test:\(port)/dns-query")
        upstream.bootstrap = [.loopbackV4]
        return upstream
    }

    private func transport(_ upstream: EncryptedUpstream, dot: Bool, threads: CurlThreads) -> any EncryptedTransport {
        if dot { return DoTTransport(upstream: upstream, threads: threads) }
        guard case .https(let path) = upstream.transport else { preconditionFailure("a DoH upstream") }
        return DoHTransport(upstream: upstream, path: path, threads: threads)
    }

    @Test(arguments: [false, true])
    func exchangeInAStalledHandshakeEndsWithTransportClosedAtShutDown(dot: Bool) async throws {
        try await StalledListener.with { port in
            let threads = CurlThreads()
            let transport = transport(try stalledUpstream(dot: dot, port: port), dot: dot, threads: threads)
            #expect(threads.count == 1)
            let query = EncryptedTestMessages.query("www.example.test")
            let exchange = Task { await transport.exchange(query, timeout: .seconds(600)) }
            // Into the handshake (or not yet: either way shutting down must end the exchange).
            try await Task.sleep(for: .milliseconds(200))
            #expect(await offThePool { threads.shutDown(within: .seconds(30)) })
            #expect(await exchange.value == .failure(.transportClosed))
            #expect(threads.count == 0)
        }
    }

    @Test(arguments: [false, true])
    func transportMadeAfterShutDownFailsEveryExchangeAtOnce(dot: Bool) async throws {
        let threads = CurlThreads()
        #expect(await offThePool { threads.shutDown(within: .seconds(1)) })
        let transport = transport(try stalledUpstream(dot: dot, port: 1), dot: dot, threads: threads)
        let query = EncryptedTestMessages.query("www.example.test")
        #expect(await transport.exchange(query, timeout: .seconds(600)) == .failure(.transportClosed))
        #expect(threads.count == 0)
    }

    /// A connect-only TLS handshake with the stalled listener, given 600 s.
    private func stalledHandshake(port: UInt16) throws -> UpstreamCurlHandle {
        let upstream = try stalledUpstream(dot: false, port: port)
        let curl = try #require(UpstreamCurlHandle(upstream: upstream, url: "https://dns.example.test:\(port)/"))
        curl.set(CURLOPT_CONNECT_ONLY, 1)
        curl.set(CURLOPT_TIMEOUT_MS, 600_000)
        return curl
    }

    @Test func stoppableTransferEndsAStalledHandshakeWhenStopped() async throws {
        try await StalledListener.with { port in
            let curl = try stalledHandshake(port: port)
            defer { curl.close() }
            let transfer = StoppableTransfer()
            let address = Int(bitPattern: curl.raw)
            let result = Task { await offThePool { transfer.perform(UnsafeMutableRawPointer(bitPattern: address)!).map(\.rawValue) } }
            try await Task.sleep(for: .milliseconds(200))
            transfer.stop()
            #expect(await result.value == nil)
        }
    }

    @Test func stoppableTransferStoppedBeforeItStartsSendsNothing() async throws {
        try await StalledListener.with { port in
            let curl = try stalledHandshake(port: port)
            defer { curl.close() }
            let transfer = StoppableTransfer()
            transfer.stop()
            #expect(transfer.perform(curl.raw) == nil)
            #expect(curl.connectionsOpened == 0)
        }
    }
}
