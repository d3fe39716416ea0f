import Foundation
import HostPinTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A UDP socket on 127.0.0.1 that is bound but never read: an upstream that swallows every query
/// (the lab's "black hole"), open for the duration of `body`.
enum SilentUpstream {
    /// Binds a UDP socket to 127.0.0.1 on a free port and passes `body` its `ip:port`.
    static func with<T>(_ body: (String) async throws -> T) async throws -> T {
        try await LoopbackSocket.with(Int32(SOCK_DGRAM.rawValue)) { port in try await body("127.0.0.1:\(port)") }
    }

    /// A loopback port nothing listens on: UDP queries sent there are answered by ICMP port unreachable.
    static let closedPort = "127.0.0.1:1"
}
