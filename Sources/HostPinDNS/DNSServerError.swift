import HostPinNet

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why a ``DNSServer`` could not start. Closed.
public enum DNSServerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The address is not a loopback address and remote clients were not allowed
    /// (``DNSServer/Configuration/allowRemote``, `--allow-remote`).
    case remoteNotAllowed(SocketAddress)
    /// The configuration names no address to listen on.
    case noListenAddress
    /// The server is already running.
    case alreadyStarted
    /// A socket could not be opened or bound on `address` for `transport`: the address is in use, the
    /// port needs privileges, or the address is not this host's.
    case bind(SocketAddress, DNSTransport, SocketError)

    public var description: String {
        switch self {
        case .remoteNotAllowed(let address):
            "refusing to listen on \(address): it is not a loopback address, so other hosts could query the DNS stub; "
                + "allow it explicitly (--allow-remote)"
        case .noListenAddress:
            "no address to listen on was given"
        case .alreadyStarted:
            "the DNS stub is already running"
        case .bind(let address, let transport, let error):
            "cannot listen on \(address) over \(transport == .udp ? "UDP" : "TCP"): \(error)" + Self.reason(error)
        }
    }

    /// What a bind failure usually means, as a clause.
    private static func reason(_ error: SocketError) -> String {
        guard case .system(_, let code) = error else { return "" }
        switch code {
        case EADDRINUSE: return " (another server, often a system DNS resolver, already uses it)"
        case EACCES: return " (ports below 1024 need root or the CAP_NET_BIND_SERVICE capability)"
        case EADDRNOTAVAIL: return " (the address is not one of this host's)"
        default: return ""
        }
    }
}
