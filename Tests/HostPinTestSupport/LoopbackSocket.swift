import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A socket bound to a free port of 127.0.0.1 that nobody serves, for upstreams that never answer
/// (``StalledListener``, and the CLI tests' silent UDP upstream).
public enum LoopbackSocket {
    /// Why the socket could not be set up.
    public struct SocketError: Error, CustomStringConvertible {
        public let call: String
        public let code: Int32
        public var description: String { "\(call) failed: \(String(cString: strerror(code)))" }
    }

    /// Binds a socket of `type` (`SOCK_STREAM`, `SOCK_DGRAM`) to 127.0.0.1 on a free port, listening
    /// with `backlog` when given, and passes `body` the port; the socket is closed when `body` returns.
    public static func with<T>(_ type: Int32, backlog: Int32? = nil, _ body: (UInt16) async throws -> T) async throws -> T {
        let descriptor = socket(AF_INET, type, 0)
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
        if let backlog, listen(descriptor, backlog) != 0 { throw SocketError(call: "listen", code: errno) }
        return try await body(UInt16(bigEndian: address.sin_port))
    }
}
