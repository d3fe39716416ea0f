import CEpoll

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension SocketChannel {
    /// Opens a TCP connection to `endpoint` without blocking a thread: a non-blocking `connect`, then
    /// waits for a write edge until the socket is connected or reports its error (`SO_ERROR`).
    ///
    /// - Parameter deadline: When to give up (``SocketError/timedOut``).
    /// - Throws: ``SocketError``: `.system(call: "connect", errno: ECONNREFUSED)` when nothing listens.
    package static func connect(to endpoint: SocketAddress, deadline: ContinuousClock.Instant) async throws(SocketError)
        -> SocketChannel
    {
        let domain = endpoint.address.family == .v4 ? AF_INET : AF_INET6
        let descriptor = socket(domain, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .system(call: "socket", errno: errno) }
        let status = endpoint.withSockaddr { Glibc.connect(descriptor, $0, $1) }
        let failure = errno
        let channel = try SocketChannel(descriptor: descriptor, peer: endpoint)
        guard status != 0 else { return channel }
        guard failure == EINPROGRESS else {
            channel.close()
            throw .system(call: "connect", errno: failure)
        }
        while true {
            var code: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            _ = getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &code, &length)
            if code != 0 {
                channel.close()
                throw .system(call: "connect", errno: code)
            }
            // Connected once the kernel has a peer; a write edge before that (none is expected) waits again.
            if SocketAddress.of(socket: descriptor, peer: true) != nil { return channel }
            do throws(SocketError) {
                try await channel.waitWritable(deadline: deadline)
            } catch {
                channel.close()
                throw error
            }
        }
    }
}
