import HostPin
import HostPinNet
import HostPinService
import HostPinTestSupport
import Testing

/// ``Service/reload(to:)``: a good configuration is put in force at once, keeping the cache; a bad one
/// changes nothing (the same all-or-nothing rule as SIGHUP).
@Suite struct ServiceReloadTests {
    @Test func aChangedRuleIsInForceForTheStubAndTheProxyAndTheCacheIsKept() async throws {
        let kept = KeptLog()
        var configuration = try ServiceLab.configuration()
        let service = try await Service.start(configuration, log: kept.log)
        let listeners = await service.listeners
        let dns = try #require(listeners.dns.first)
        let proxy = try #require(listeners.proxy)
        let cdnBefore = try await ServiceLab.ask(dns, "cdn.example.test")
        #expect(cdnBefore == .noError("127.0.0.11"))
        let entries = await service.statistics.cache.entries

        configuration.rules = try ServiceLab.rules(#"{"rules": [{"action": "block", "host": "www.example.test"}]}"#)
        let reload = try await service.reload(to: configuration)
        #expect(reload.changes == ["1 rule"])
        #expect(reload.waitingForRestart.isEmpty)
        let blocked = try await ServiceLab.ask(dns, "www.example.test")
        #expect(blocked == .nxdomain)
        #expect(try await ServiceLab.curl(proxy, try ServiceLab.url()).status == "403")
        // Not blocked, and still cached: the reload kept the cache.
        let cdnAfter = try await ServiceLab.ask(dns, "cdn.example.test")
        #expect(cdnAfter == .noError("127.0.0.11"))
        let statistics = await service.statistics
        #expect(statistics.cache.entries >= entries)
        #expect(statistics.reloads == 1)
        #expect(statistics.ruleCount == 1)
        #expect(await service.listeners == listeners)
        await service.stop()
        #expect(kept.contains("hostpin: reloaded: 1 rule"))
    }

    /// New DNSSEC settings are a new trusted resolver, and every cached answer goes: it was judged (or
    /// not) under the old settings, and would keep that verdict for its whole TTL.
    @Test func changedDNSSECSettingsDropTheCachedAnswers() async throws {
        let kept = KeptLog()
        var configuration = try ServiceLab.configuration()
        let service = try await Service.start(configuration, log: kept.log)
        let dns = try #require(await service.listeners.dns.first)
        #expect(try await ServiceLab.ask(dns, "cdn.example.test") == .noError("127.0.0.11"))
        #expect(await service.statistics.cache.entries > 0)

        configuration.resolverConfiguration.dnssec = DNSSECConfiguration(mode: .report, trustAnchors: .ianaRoot,
                                                                          insecureDomains: [try HostName.parse("example.test")])
        let reload = try await service.reload(to: configuration)
        let last = try #require(reload.changes.last)
        #expect(last.hasPrefix("DNSSEC report (") && last.hasSuffix(" cached answers dropped: they were judged under the old DNSSEC settings)"),
                "\(reload.changes)")
        #expect(await service.statistics.cache.entries == 0)
        // The same settings again: nothing to rebuild, nothing dropped.
        #expect(try await ServiceLab.ask(dns, "cdn.example.test") == .noError("127.0.0.11"))
        let again = try await service.reload(to: configuration)
        #expect(again.changes == ["0 rules"])
        #expect(await service.statistics.cache.entries > 0)
        await service.stop()
    }

    @Test func aProxyAddressInUseRefusesTheWholeReload() async throws {
        let kept = KeptLog()
        var configuration = try ServiceLab.configuration()
        let service = try await Service.start(configuration, log: kept.log)
        let listeners = await service.listeners
        let dns = try #require(listeners.dns.first)
        // A new rule, and the proxy moved to where the stub listens over TCP: the move fails, so the rule
        // must not be in force either.
        configuration.rules = try ServiceLab.rules(#"{"rules": [{"action": "block", "host": "www.example.test"}]}"#)
        configuration.proxyOptions?.configuration.listenAddress = dns
        do {
            try await service.reload(to: configuration)
            Issue.record("the reload was applied")
        } catch {
            guard case .reloadRefused(let reason) = error else {
                Issue.record("expected a refused reload, got \(error)")
                await service.stop()
                return
            }
            #expect(reason.contains("\(dns)"))
        }
        let unchanged = try await ServiceLab.ask(dns, "www.example.test")
        #expect(unchanged == .noError("127.0.0.10"))
        let reply = try await ServiceLab.curl(try #require(listeners.proxy), try ServiceLab.url())
        #expect(reply.status == "200")
        let statistics = await service.statistics
        #expect(statistics.reloads == 0)
        #expect(statistics.ruleCount == 0)
        #expect(await service.listeners == listeners)
        await service.stop()
        #expect(kept.contains("hostpin: reload refused, nothing changed: "))
    }
}
