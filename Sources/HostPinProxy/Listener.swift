import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A listening TCP socket that accepts connections as a Dispatch read source reports them and hands
/// each one, non-blocking, to a handler.
final class Listener: Sendable {
    /// Where the socket is bound (with the kernel's port when port 0 was asked for).
    let boundAddress: SocketAddress
    private let descriptor: Int32
    /// Guards the accept source, which is cancelled (once) by ``close()``.
    private let source: Mutex<(any DispatchSourceRead)?>

    /// Binds and listens on `address`.
    ///
    /// - Parameters:
    ///   - address: The endpoint; port 0 picks a free port.
    ///   - backlog: The kernel's queue of connections not yet accepted.
    ///   - onAccept: Called on a Dispatch queue with each accepted socket (already non-blocking).
    /// - Throws: ``ListenError``.
    init(address: SocketAddress, backlog: Int32 = 512,
         onAccept: @escaping @Sendable (SocketChannel) -> Void) throws(ListenError) {
        let domain = address.address.family == .v4 ? AF_INET : AF_INET6
        let descriptor = socket(domain, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .socket(address, SocketError.system(call: "socket", errno: errno)) }
        var one: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if address.address.family == .v6 {
            _ = setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        guard address.withSockaddr({ bind(descriptor, $0, $1) }) == 0 else {
            let failure = errno
            Glibc.close(descriptor)
            throw .socket(address, .system(call: "bind", errno: failure))
        }
        guard listen(descriptor, backlog) == 0, let bound = SocketAddress.of(socket: descriptor, peer: false) else {
            let failure = errno
            Glibc.close(descriptor)
            throw .socket(address, .system(call: "listen", errno: failure))
        }
        self.descriptor = descriptor
        self.boundAddress = bound
        let queue = DispatchQueue(label: "hostpin.proxy.listener")
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        source.setEventHandler {
            while true {
                // `accept4` is not visible through Glibc's module; SocketChannel sets O_NONBLOCK.
                let client = accept(descriptor, nil, nil)
                if client < 0 {
                    // EAGAIN: drained. EMFILE and friends: leave the rest queued until the next event.
                    return
                }
                _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                onAccept(SocketChannel(descriptor: client))
            }
        }
        source.setCancelHandler { Glibc.close(descriptor) }
        source.resume()
        self.source = Mutex(source)
    }

    /// Stops accepting and closes the listening socket. Idempotent.
    func close() {
        source.withLock { source in
            source?.cancel()
            source = nil
        }
    }
}
