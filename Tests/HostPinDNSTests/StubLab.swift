import HostPin
import HostPinNet
import HostPinTestSupport
@testable import HostPinDNS

/// Stubs on the lab's trusted NSD, each with a cache of its own.
enum StubLab {
    /// A responder resolving through `upstream` (the lab's trusted NSD by default).
    static func responder(upstream: Upstream? = nil, rules: Rules = Rules(), forwarder: (any DNSForwarder)? = nil,
                          budget: Duration = .seconds(20)) throws -> DNSResponder {
        // The lab's NSD validates from the lab's anchor; a test's own `upstream` cannot answer DS/DNSKEY.
        var configuration = try upstream.map { TrustedResolver.Configuration.ownServer([$0]) }
            ?? TrustedResolver.Configuration.lab([Lab.current().trustedDNS])
        configuration.budget = budget
        configuration.timeout = min(configuration.timeout, budget / 4)
        return DNSResponder(resolver: CachingResolver(upstream: try TrustedResolver(configuration: configuration)),
                            rules: rules, forwarder: forwarder)
    }

    /// A responder that resolves and forwards through `upstreams` (the lab's trusted NSD by default), its
    /// trusted resolver being its forwarder as in `hostpin serve`; and that resolver.
    static func forwarding(through upstreams: [Upstream]? = nil, clock: any MonotonicClock = SystemMonotonicClock())
        throws -> (DNSResponder, TrustedResolver)
    {
        // The lab's NSD validates from the lab's anchor; lists of the test's own servers run with DNSSEC off.
        var configuration = try upstreams.map { TrustedResolver.Configuration.ownServer($0) }
            ?? TrustedResolver.Configuration.lab([Lab.current().trustedDNS])
        configuration.budget = .seconds(20)  // room for a loaded machine: these tests check answers, not time
        let trusted = try TrustedResolver(configuration: configuration, clock: clock)
        return (DNSResponder(resolver: CachingResolver(upstream: trusted), forwarder: trusted), trusted)
    }

    /// A started server on `127.0.0.1:0` (UDP and TCP) with `configure` applied, and its address.
    static func server(responder: DNSResponder? = nil, configure: (inout DNSServer.Configuration) -> Void = { _ in })
        throws -> (DNSServer, SocketAddress)
    {
        var configuration = DNSServer.Configuration()
        configuration.listenAddresses = [SocketAddress("127.0.0.1:0")!]
        configure(&configuration)
        let server = DNSServer(configuration: configuration, responder: try responder ?? self.responder())
        let addresses = try server.start()
        return (server, addresses[0])
    }
}

/// A ``DNSForwarder`` whose upstreams never answer.
struct SilentForwarder: DNSForwarder {
    func forward(_: ForwardedQuestion) async throws(ResolutionError) -> [UInt8] {
        throw .upstreamsFailed([])
    }
}
