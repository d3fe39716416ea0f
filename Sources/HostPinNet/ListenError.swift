/// Why a server (the forward proxy, the metrics endpoint) could not start listening. Closed.
public enum ListenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The address is not a loopback address and remote clients were not allowed
    /// (the proxy's or the metrics endpoint's `allowRemote`, `--allow-remote`).
    case remoteNotAllowed(SocketAddress)
    /// The server is already running.
    case alreadyStarted
    /// The socket could not be created, bound or put in listening state (address in use, no permission).
    case socket(SocketAddress, SocketError)

    public var description: String {
        switch self {
        case .remoteNotAllowed(let address):
            "refusing to listen on \(address): it is not a loopback address, so other hosts could connect to it; allow it explicitly (--allow-remote)"
        case .alreadyStarted:
            "the server is already running"
        case .socket(let address, let error):
            "cannot listen on \(address): \(error)"
        }
    }
}
