import CEpoll
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A listening TCP socket on the ``EventLoop``: an accept task takes every queued connection
/// (`accept4`, non-blocking, close-on-exec) until `EAGAIN`, hands each to a handler, and waits for the
/// next read edge.
///
/// Out of descriptors (`EMFILE`, `ENFILE`), the queued connections would keep the socket readable and a
/// naive loop would spin: instead the listener closes a descriptor it keeps in reserve, accepts one
/// connection and closes it at once (the client sees the connection closed instead of waiting), and
/// reopens the reserve; without a reserve it backs off for 100 ms. Each such episode is reported once,
/// until an accept succeeds again. The connections already accepted are served throughout.
package final class Listener: Sendable {
    /// Where the socket is bound (with the kernel's port when port 0 was asked for).
    package let boundAddress: SocketAddress
    private let channel: SocketChannel
    /// Guards the accept task (set once by `init`, awaited by ``close()``).
    private let acceptor = Mutex<Task<Void, Never>?>(nil)

    /// How long to wait before accepting again when out of descriptors and without a reserve.
    static let backOff = Duration.milliseconds(100)

    /// Binds and listens on `address`, and starts accepting.
    ///
    /// - Parameters:
    ///   - address: The endpoint; port 0 picks a free port. An IPv6 address listens on IPv6 only.
    ///   - backlog: The kernel's queue of connections not yet accepted.
    ///   - onExhausted: Called once per episode of running out of descriptors, with the `accept` error.
    ///   - onAccept: Called with each accepted connection, registered on the loop, from the accept task.
    /// - Throws: ``ListenError/socket(_:_:)``.
    package init(address: SocketAddress, backlog: Int32 = 512,
                 onExhausted: @escaping @Sendable (SocketError) -> Void,
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
        do throws(SocketError) {
            channel = try SocketChannel(descriptor: descriptor, peer: nil)
        } catch {
            throw .socket(address, error)
        }
        boundAddress = bound
        let channel = channel
        acceptor.withLock { $0 = Task { await Self.accept(on: channel, onExhausted: onExhausted, onAccept: onAccept) } }
    }

    /// Stops accepting (at once) and lets the accept task close the socket. Safe from any task.
    package func shutdown() {
        channel.shutdown()
        acceptor.withLock { $0?.cancel() }
    }

    /// Stops accepting and waits until the listening socket is closed. Idempotent.
    package func close() async {
        shutdown()
        let task = acceptor.withLock { $0 }
        await task?.value
    }

    /// Accepts until the socket is shut down, then closes it.
    private static func accept(on channel: SocketChannel, onExhausted: @Sendable (SocketError) -> Void,
                               onAccept: @Sendable (SocketChannel) -> Void) async {
        var reserve = openReserve()
        var exhausted = false
        defer {
            if reserve >= 0 { Glibc.close(reserve) }
            channel.close()
        }
        while !channel.isShut {
            // The client's address as accept gives it: getpeername would fail once the client has reset.
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let client = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    accept4(channel.descriptor, $0, &length, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
                }
            }
            let failure = errno
            if client >= 0 {
                exhausted = false
                if reserve < 0 { reserve = openReserve() }
                // A connection that cannot be registered is closed by the channel's initialiser.
                if let connection = try? SocketChannel(descriptor: client, peer: SocketAddress(storage: storage)) {
                    onAccept(connection)
                }
                continue
            }
            switch failure {
            case EINTR, ECONNABORTED:
                continue
            case EAGAIN, EWOULDBLOCK:
                do throws(SocketError) {
                    try await channel.waitReadable(deadline: nil)
                } catch {
                    return
                }
            case EMFILE, ENFILE:
                if !exhausted {
                    exhausted = true
                    onExhausted(.system(call: "accept", errno: failure))
                }
                if reserve < 0 { reserve = openReserve() }
                if reserve >= 0 {
                    // The kernel reports EMFILE before it looks at the queue: free one descriptor to see.
                    Glibc.close(reserve)
                    let dropped = accept4(channel.descriptor, nil, nil, Int32(SOCK_CLOEXEC.rawValue))
                    let dropFailure = errno
                    if dropped >= 0 { Glibc.close(dropped) }
                    reserve = openReserve()
                    if dropped >= 0 { continue }
                    switch dropFailure {
                    case EINTR, ECONNABORTED:
                        continue
                    case EAGAIN, EWOULDBLOCK:
                        // Queue drained: wait for the next connection, as when descriptors are plenty.
                        do throws(SocketError) {
                            try await channel.waitReadable(deadline: nil)
                        } catch {
                            return
                        }
                        continue
                    default:
                        break
                    }
                }
                await EventLoop.shared.sleep(until: .after(backOff))
            default:
                // ENOBUFS, ENOMEM, a protocol error: not the client's fault, and not fixed by retrying at once.
                await EventLoop.shared.sleep(until: .after(backOff))
            }
        }
    }

    /// A descriptor kept open so one can be freed to accept (and close) a connection when the process
    /// runs out; -1 when none could be opened.
    private static func openReserve() -> Int32 {
        open("/dev/null", O_RDONLY | O_CLOEXEC)
    }
}
