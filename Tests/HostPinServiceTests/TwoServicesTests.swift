import HostPin
import HostPinNet
import HostPinService
import HostPinTestSupport
import Testing

/// Nothing of a ``Service`` is process-wide: two in one process, on their own ports, each with its own
/// rules, upstreams, cache and log level, and one stopping leaves the other running.
@Suite struct TwoServicesTests {
    @Test func twoServicesRunSideBySideWithTheirOwnSettings() async throws {
        let lab = try Lab.current()
        var blocking = try ServiceLab.configuration()
        blocking.rules = try ServiceLab.rules(#"{"rules": [{"action": "block", "host": "www.example.test"}]}"#)
        blocking.log.level = .warning
        var plain = try ServiceLab.configuration(proxy: false)
        plain.resolverConfiguration = try TrustedResolver.Configuration.lab([lab.trustedDNS2])
        let quiet = KeptLog()
        let talkative = KeptLog()
        let first = try await Service.start(blocking, log: quiet.log)
        let second = try await Service.start(plain, log: talkative.log)
        let firstDNS = try #require(await first.listeners.dns.first)
        let secondDNS = try #require(await second.listeners.dns.first)
        #expect(firstDNS != secondDNS)
        #expect(await second.listeners.proxy == nil)

        let fromTheBlocking = try await ServiceLab.ask(firstDNS, "www.example.test")

        #expect(fromTheBlocking == .nxdomain)
        let fromThePlain = try await ServiceLab.ask(secondDNS, "www.example.test")
        #expect(fromThePlain == .noError("127.0.0.10"))
        #expect(try await ServiceLab.curl(try #require(await first.listeners.proxy), try ServiceLab.url()).status == "403")
        // Each its own cache and upstreams: the blocked name never reached the first one's cache.
        let firstCache = await first.statistics.cache
        #expect(firstCache.misses == 0, "\(firstCache)")
        #expect(await second.statistics.cache.misses == 1)
        #expect(await first.statistics.upstreams == [lab.trustedDNS])
        #expect(await second.statistics.upstreams == [lab.trustedDNS2])

        // A reload of one is the other's business only.
        blocking.rules = Rules()
        try await first.reload(to: blocking)
        let afterTheReload = try await ServiceLab.ask(firstDNS, "www.example.test")
        #expect(afterTheReload == .noError("127.0.0.10"))
        #expect(await second.statistics.reloads == 0)

        await first.stop()
        let afterTheFirstStopped = try await ServiceLab.ask(secondDNS, "cdn.example.test")
        #expect(afterTheFirstStopped == .noError("127.0.0.11"))
        await second.stop()

        // Each log at its own level: info for the second, warning (no "listening on" lines) for the first.
        #expect(talkative.contains("listening on \(secondDNS) (DNS over UDP and TCP)"))
        #expect(!quiet.contains("listening on"))
    }
}
