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
    /// Listens on a free port and passes `body` the port; the socket is closed when `body` returns.
    public static func with<T>(_ body: (UInt16) async throws -> T) async throws -> T {
        // Room for every client of a test: a full backlog would drop SYNs and stall the TCP handshake instead.
        try await LoopbackSocket.with(Int32(SOCK_STREAM.rawValue), backlog: 1024, body)
    }
}
