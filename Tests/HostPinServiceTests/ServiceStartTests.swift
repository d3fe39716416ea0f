import HostPin
import HostPinNet
import HostPinService
import HostPinTestSupport
import Testing

/// ``Service/start(_:log:)`` in process: the stub and the proxy on one cache, where they listen, and a
/// start that cannot listen.
@Suite struct ServiceStartTests {
    @Test func stubAndProxyAnswerFromOneCache() async throws {
        let kept = KeptLog()
        var configuration = try ServiceLab.configuration()
        configuration.family = .v4  // the proxy asks for A, as the stub's client does: one cache entry for both
        let service = try await Service.start(configuration, log: kept.log)
        let listeners = await service.listeners
        let dns = try #require(listeners.dns.first)
        let proxy = try #require(listeners.proxy)
        #expect(dns.port != 0 && proxy.port != 0)
        #expect(listeners.metrics == nil && listeners.control == nil)

        let fromTheStub = try await ServiceLab.ask(dns, "www.example.test")

        #expect(fromTheStub == .noError("127.0.0.10"))
        let misses = await service.statistics.cache.misses
        // The proxy finds the answer the stub's query put in the cache: no second miss.
        let reply = try await ServiceLab.curl(proxy, try ServiceLab.url())
        #expect(reply.status == "200")
        #expect(reply.body == "origin=www host=www.example.test:\(try Lab.current().httpPort)\n")
        let statistics = await service.statistics
        #expect(statistics.cache.misses == misses)
        #expect(statistics.cache.hits >= 1)
        #expect(statistics.upstreams == [try Lab.current().trustedDNS])
        #expect(statistics.reloads == 0)
        await service.stop()

        #expect(kept.contains("listening on \(dns) (DNS over UDP and TCP)"))
        #expect(kept.contains("listening on \(proxy) (HTTP proxy)"))
    }

    @Test func anAddressInUseIsAnErrorAndNothingKeepsListening() async throws {
        let first = try await Service.start(try ServiceLab.configuration(proxy: false), log: KeptLog().log)
        let taken = try #require(await first.listeners.dns.first)
        var configuration = try ServiceLab.configuration()
        configuration.proxyOptions?.configuration.listenAddress = taken  // the stub's TCP port
        do {
            let second = try await Service.start(configuration, log: KeptLog().log)
            await second.stop()
            Issue.record("a proxy on \(taken), where the first service's stub listens over TCP, started")
        } catch {
            guard case .proxyListen = error else {
                Issue.record("expected a proxy listen error, got \(error)")
                await first.stop()
                return
            }
        }
        // The first service is untouched by the second one's failed start.
        let fromTheFirst = try await ServiceLab.ask(taken, "www.example.test")
        #expect(fromTheFirst == .noError("127.0.0.10"))
        await first.stop()
    }
}
