import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension SocketChannel {
    /// Opens a TCP connection to `endpoint` without blocking a thread: a non-blocking `connect`, then a
    /// wait for writability and the socket's `SO_ERROR`.
    ///
    /// - Parameter deadline: When to give up (``SocketError/timedOut``).
    /// - Throws: ``SocketError``: `.system(call: "connect", errno: ECONNREFUSED)` when nothing listens.
    static func connect(to endpoint: SocketAddress, deadline: DispatchTime) async throws(SocketError) -> SocketChannel {
        let domain = endpoint.address.family == .v4 ? AF_INET : AF_INET6
        let descriptor = socket(domain, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .system(call: "socket", errno: errno) }
        let status = endpoint.withSockaddr { Glibc.connect(descriptor, $0, $1) }
        let failure = errno
        let channel = SocketChannel(descriptor: descriptor)
        if status != 0 {
            guard failure == EINPROGRESS else {
                channel.close()
                throw .system(call: "connect", errno: failure)
            }
            do throws(SocketError) {
                try await channel.waitWritable(deadline: deadline)
            } catch {
                channel.close()
                throw error
            }
            var code: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            _ = getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &code, &length)
            if code != 0 {
                channel.close()
                throw .system(call: "connect", errno: code)
            }
        }
        return channel
    }
}
