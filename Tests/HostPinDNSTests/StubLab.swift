import HostPin
import HostPinNet
import HostPinTestSupport
@testable import HostPinDNS

/// Stubs on the lab's trusted NSD, each with a cache of its own.
enum StubLab {
    /// A responder resolving through `upstream` (the lab's trusted NSD by default).
    static func responder(upstream: Upstream? = nil, rules: Rules = Rules(), forwarder: (any DNSForwarder)? = nil,
                          budget: Duration = .seconds(5)) throws -> DNSResponder {
        var configuration = TrustedResolver.Configuration(upstreams: [try upstream ?? Lab.current().trustedDNS])
        configuration.budget = budget
        configuration.timeout = min(configuration.timeout, budget / 4)
        return DNSResponder(resolver: CachingResolver(upstream: try TrustedResolver(configuration: configuration)),
                            rules: rules, forwarder: forwarder)
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

/// A ``DNSForwarder`` that sends the query as it is over UDP to one server (the lab's NSD) and returns
/// its reply: the seam's contract, exercised against a real server.
struct UDPForwarder: DNSForwarder {
    let server: SocketAddress

    func forward(_ query: [UInt8]) async -> [UInt8]? {
        try? await DNSClient.udp(query, to: server, timeout: .seconds(2))
    }
}

/// A ``DNSForwarder`` whose upstreams never answer.
struct SilentForwarder: DNSForwarder {
    func forward(_: [UInt8]) async -> [UInt8]? { nil }
}
