import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A UDP socket on 127.0.0.1 that is bound but never read: an upstream that swallows every query
/// (the lab's "black hole"), open for the duration of `body`.
enum SilentUpstream {
    /// Why the socket could not be set up.
    struct SocketError: Error, CustomStringConvertible {
        let call: String
        let code: Int32
        var description: String { "\(call) failed: \(String(cString: strerror(code)))" }
    }

    /// Binds a UDP socket to 127.0.0.1 on a free port and passes `body` its `ip:port`.
    static func with<T>(_ body: (String) async throws -> T) async throws -> T {
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
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
        return try await body("127.0.0.1:\(UInt16(bigEndian: address.sin_port))")
    }

    /// A loopback port nothing listens on: UDP queries sent there are answered by ICMP port unreachable.
    static let closedPort = "127.0.0.1:1"
}
