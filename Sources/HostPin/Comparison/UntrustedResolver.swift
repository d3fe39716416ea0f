import Foundation

/// The resolver HostPin does not trust — the system's configured one or an explicit `--local` server —
/// used only when a caller asks for it, to compare answers (hijack detection). Its answers are marked
/// ``Resolution/Source/untrusted`` and never enter a cache.
public final class UntrustedResolver: HostResolver {
    /// The server queried; `nil` for the system's configured resolvers (read by c-ares at start, never written).
    public let server: Upstream?
    let transport: any UpstreamTransport

    /// Creates a resolver for `server`, or for the system's configured resolvers when `server` is `nil`.
    ///
    /// - Parameters:
    ///   - server: The untrusted server (plain, or encrypted as a ``TrustedResolver``'s upstreams are), or
    ///     `nil` for the system configuration.
    ///   - timeout: c-ares's first per-try timeout. Default 1 second.
    ///   - tries: Attempts. Default 2.
    /// - Throws: ``ResolutionError/setupFailed(_:)`` when c-ares cannot create the channel.
    public init(server: Upstream?, timeout: Duration = .seconds(1), tries: Int = 2) throws(ResolutionError) {
        self.server = server
        if let server {
            transport = try server.makeTransport(timeout: timeout, tries: tries, useTCP: false)
        } else {
            transport = try AresChannel(server: nil, timeout: timeout, tries: tries, useTCP: false)
        }
    }

    /// Asks the untrusted resolver for `name`, reading its replies as ``TrustedResolver`` does: only records
    /// of the type asked count, and a malformed reply is a failure. With `any`, the addresses of one family
    /// are the answer even when the other family's query failed (a resolver that refuses AAAA still shows
    /// what it says for A).
    ///
    /// - Returns: A ``Resolution`` with source ``Resolution/Source/untrusted``.
    /// - Throws: ``ResolutionError/nxdomain(_:)``, ``ResolutionError/nodata(_:_:)``,
    ///   ``ResolutionError/upstreamsFailed(_:)`` (one entry), ``ResolutionError/cancelled``.
    public func resolve(_ name: HostName, family: AddressFamily) async throws(ResolutionError) -> Resolution {
        let upstream = server ?? Upstream(address: .loopbackV4, port: 53)
        switch await AddressLookup.ask(transport, for: name, family: family, deadline: nil) {
        case .addresses(let addresses, let cnames), .partial(let addresses, let cnames, _):
            return Resolution(name: name, addresses: addresses, cnames: cnames, upstream: server,
                              source: .untrusted, receivedAt: Date())
        case .nodata: throw .nodata(name, family)
        case .nxdomain: throw .nxdomain(name)
        case .failed(let reason): throw .upstreamsFailed([UpstreamFailure(upstream: upstream, reason: reason)])
        case nil: throw .cancelled
        }
    }
}
