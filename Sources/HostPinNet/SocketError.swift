#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why a socket operation failed. Closed: the proxy maps each case to what it tells the client.
public enum SocketError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A system call failed; the call's name and `errno`.
    case system(call: String, errno: Int32)
    /// Nothing happened on the socket before the deadline.
    case timedOut
    /// The socket was closed or shut down (the server is stopping).
    case closed
    /// The waiting task was cancelled.
    case cancelled

    /// `connect: Connection refused (errno 111)`.
    public var description: String {
        switch self {
        case .system(let call, let code): "\(call): \(String(cString: strerror(code))) (errno \(code))"
        case .timedOut: "timed out"
        case .closed: "the connection was closed"
        case .cancelled: "cancelled"
        }
    }
}
