import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A TCP socket on 127.0.0.1 that listens but never accepts: the kernel completes every client's TCP
/// handshake into the backlog, and nothing ever answers the TLS ClientHello. A DoT or DoH upstream whose
/// TLS handshake stalls, open for the duration of `body`.
public enum StalledListener {
    /// Why the socket could not be set up.
    public struct SocketError: Error, CustomStringConvertible {
        public let call: String
        public let code: Int32
        public var description: String { "\(call) failed: \(String(cString: strerror(code)))" }
    }

    /// Listens on a free port and passes `body` the port; the socket is closed when `body` returns.
    public static func with<T>(_ body: (UInt16) async throws -> T) async throws -> T {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw SocketError(call: "socket", code: errno) }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(descriptor, generic, length) == 0 && getsockname(descriptor, generic, &length) == 0
            }
        }
        guard bound else { throw SocketError(call: "bind", code: errno) }
        // Room for every client of a test: a full backlog would drop SYNs and stall the TCP handshake instead.
        guard listen(descriptor, 1024) == 0 else { throw SocketError(call: "listen", code: errno) }
        return try await body(UInt16(bigEndian: address.sin_port))
    }
}
