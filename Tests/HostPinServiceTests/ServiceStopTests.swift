import Foundation
import HostPin
import HostPinNet
import HostPinService
import HostPinTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// ``Service/stop(grace:)``: a transfer in flight through the proxy finishes within the grace, nothing
/// new is accepted, and the listeners are closed when it returns; ``Service/cutTransfers()`` cuts what
/// is left. Durations bounded: run with scripts/test's SERVICE phase.
@Suite struct ServiceStopTests {
    @Test func aTransferInFlightFinishesWithinTheGrace() async throws {
        let service = try await Service.start(try ServiceLab.configuration(), log: KeptLog().log)
        let listeners = await service.listeners
        let proxy = try #require(listeners.proxy)
        // 20 bytes, one every 100 ms: about 2 s.
        let download = Task { try await ServiceLab.curl(proxy, try ServiceLab.url("www.example.test", "/drip/20/100")) }
        try await Self.waitForATransfer(through: service)

        let started = ContinuousClock.now
        await service.stop(grace: .seconds(20))
        let stopped = ContinuousClock.now - started
        let reply = try await download.value
        #expect(reply.status == "200")
        #expect(reply.body.utf8.count == 20)
        #expect(stopped < .seconds(15), "stopped after \(stopped)")
        // Stopped: neither the proxy nor the stub answers any more.
        #expect(try await ServiceLab.curl(proxy, try ServiceLab.url()).status == "000")
        #expect(try await ServiceLab.ask(try #require(listeners.dns.first), "www.example.test").status != "NOERROR")
    }

    @Test func cutTransfersEndsWhatTheGraceWouldStillWaitFor() async throws {
        let service = try await Service.start(try ServiceLab.configuration(dns: false), log: KeptLog().log)
        let proxy = try #require(await service.listeners.proxy)
        // 100 bytes, one every 100 ms: about 10 s, far more than the test waits.
        let download = Task { try await ServiceLab.curl(proxy, try ServiceLab.url("www.example.test", "/drip/100/100")) }
        try await Self.waitForATransfer(through: service)

        let started = ContinuousClock.now
        let stopping = Task { await service.stop(grace: .seconds(60)) }
        try await Task.sleep(for: .milliseconds(300))
        await service.cutTransfers()
        await stopping.value
        let stopped = ContinuousClock.now - started
        let reply = try await download.value
        #expect(stopped < .seconds(5), "stopped after \(stopped)")
        #expect(reply.body.utf8.count < 100)
    }

    /// Waits until the proxy has resolved the origin's name, so that the transfer is under way.
    private static func waitForATransfer(through service: Service) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while await service.statistics.cache.misses == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        try await Task.sleep(for: .milliseconds(300))
    }
}

/// A stop while a reload is under way: the reload is refused at its swap and what it had started is
/// stopped again; the stop waits for it.
@Suite struct StopDuringReloadTests {
    @Test func aStopDuringAReloadRefusesItAndKeepsNothingItStarted() async throws {
        var configuration = try ServiceLab.configuration(proxy: false)
        let service = try await Service.start(configuration, log: KeptLog().log)
        #expect(await service.listeners.dns.count == 1)
        try await LoopbackSocket.with(Int32(SOCK_DGRAM.rawValue)) { port in
            // The new upstreams hold the reload: a DoH name without an address, looked up through a
            // plain upstream that never answers, for the whole 2 s budget.
            let silent = Upstream("127.0.0.1:\(port)")!
            let doh = Upstream(try EncryptedUpstream.parse("https://dns.example.test/dns-query"))
            configuration.resolverConfiguration = TrustedResolver.Configuration.ownServer([doh, silent])  // a silent socket of its own
            configuration.resolverConfiguration.budget = .seconds(2)
            // And a second DNS address, started off to the side after the lookup.
            configuration.dns?.listenAddresses.append(SocketAddress("127.0.0.1:0")!)
            let new = configuration
            let reload = Task { () async -> ServiceError? in
                do throws(ServiceError) {
                    try await service.reload(to: new)
                    return nil
                } catch {
                    return error
                }
            }
            try await Task.sleep(for: .milliseconds(300))
            await service.stop()
            let refusal = await reload.value
            guard case .reloadRefused(let reason)? = refusal else {
                Issue.record("expected a refused reload, got \(String(describing: refusal))")
                return
            }
            #expect(reason == "the service is stopping")
        }
        let statistics = await service.statistics
        #expect(statistics.reloads == 0)
        #expect(statistics.upstreams == [try Lab.current().trustedDNS])
        #expect(await service.configuration.dns?.listenAddresses.count == 1)
    }
}
