// SOCK_NONBLOCK: <sys/socket.h>'s socket types are found through CEpoll's import of it in a release
// build (its recvmmsg/sendmmsg declarations need struct msghdr), not through Glibc's.
import CEpoll

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One datagram received: its bytes and where it came from.
package struct Datagram: Sendable {
    package let bytes: [UInt8]
    package let source: SocketAddress
}

/// A UDP socket bound to one address, on the ``EventLoop``: receiving suspends the task until a datagram
/// arrives (the channel's no-lost-wakeup wait), sending never waits.
///
/// One task receives at a time (the channel keeps one waiter per direction); any number may send.
/// Sending does not wait for buffer space because several tasks send on one socket and a direction has
/// one waiter: a datagram the kernel has no room for is dropped, as the network may drop it too.
package final class DatagramSocket: Sendable {
    /// Where the socket is bound (with the kernel's port when port 0 was asked for).
    package let boundAddress: SocketAddress
    private let channel: SocketChannel

    /// The largest datagram read: the largest UDP payload (RFC 768 length field, less the header).
    package static let maximumDatagram = 65_507

    /// Opens a UDP socket bound to `address` and registers it on the shared loop.
    ///
    /// - Parameters:
    ///   - address: The endpoint; port 0 picks a free port. An IPv6 address binds IPv6 only.
    ///   - receiveBuffer: The kernel receive buffer to ask for (`SO_RCVBUF`, bytes; Linux caps it at
    ///     `net.core.rmem_max`), for a server that must absorb bursts; `nil` keeps the default, which
    ///     holds about 256 small datagrams.
    /// - Throws: ``SocketError/system(call:errno:)`` from `socket`, `bind` (`EADDRINUSE`, `EACCES`,
    ///   `EADDRNOTAVAIL`) or the loop's registration.
    package init(binding address: SocketAddress, receiveBuffer: Int? = nil) throws(SocketError) {
        let (descriptor, bound) = try BlockingDatagramSocket.open(binding: address, receiveBuffer: receiveBuffer,
                                                                  flags: Int32(SOCK_NONBLOCK.rawValue))
        boundAddress = bound
        channel = try SocketChannel(descriptor: descriptor, peer: nil)  // closes the descriptor when it throws
    }

    /// Waits for the next datagram.
    ///
    /// - Parameter deadline: When to give up (``SocketError/timedOut``); `nil` waits for ever.
    /// - Throws: ``SocketError``: `.closed` once ``close()`` was called, `.cancelled`, `.timedOut`, or
    ///   `.system(call: "recvfrom", …)`.
    package func receive(deadline: ContinuousClock.Instant?) async throws(SocketError) -> Datagram {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.maximumDatagram, alignment: 1)
        defer { buffer.deallocate() }
        return try await receive(deadline: deadline, into: buffer)
    }

    /// Waits for the next datagram, reading it into `buffer` and returning a copy of its own size.
    ///
    /// A task that receives datagram after datagram allocates `buffer` once: a buffer for the largest
    /// datagram (64 KiB) allocated and freed for each one cost the DNS stub about a seventh of its CPU
    /// time per cache hit (perf, cpu-clock; Benchmarks/README.md, item 7).
    ///
    /// - Parameters:
    ///   - deadline: When to give up (``SocketError/timedOut``); `nil` waits for ever.
    ///   - buffer: At least ``maximumDatagram`` octets, used by this call alone until it returns.
    /// - Throws: as ``receive(deadline:)``.
    package func receive(deadline: ContinuousClock.Instant?, into buffer: UnsafeMutableRawBufferPointer)
        async throws(SocketError) -> Datagram
    {
        precondition(buffer.count >= Self.maximumDatagram, "a receive buffer smaller than the largest datagram")
        while true {
            if channel.isShut { throw .closed }
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            var failure: Int32 = 0
            let count = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    let count = recvfrom(channel.descriptor, buffer.baseAddress, buffer.count, 0, $0, &length)
                    failure = errno
                    return count
                }
            }
            if count >= 0 {
                // A datagram from a family other than IPv4 and IPv6 cannot reach an IP socket.
                guard let source = SocketAddress(storage: storage) else { continue }
                return Datagram(bytes: Array(UnsafeRawBufferPointer(rebasing: buffer[..<count])), source: source)
            }
            switch failure {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: try await channel.waitReadable(deadline: deadline)
            default: throw .system(call: "recvfrom", errno: failure)
            }
        }
    }

    /// Sends `bytes` as one datagram to `destination`, without waiting.
    ///
    /// - Returns: `false` when the kernel's send buffer is full and the datagram was dropped.
    /// - Throws: ``SocketError``: `.closed` after ``close()``, `.system(call: "sendto", …)`.
    @discardableResult
    package func send(_ bytes: [UInt8], to destination: SocketAddress) throws(SocketError) -> Bool {
        try BlockingDatagramSocket.send(bytes, to: destination, on: channel.descriptor, flags: 0) { channel.isShut }
    }

    /// Fails a waiting ``receive(deadline:)`` with ``SocketError/closed``, and every later receive and
    /// send. Safe from any task; the descriptor stays open until ``close()``.
    package func shutdown() {
        channel.shutdown()
    }

    /// Deregisters the socket and closes its descriptor. Idempotent. Call it once no receive or send is
    /// running (after ``shutdown()`` and the end of the tasks using the socket): a descriptor number is
    /// reused at once by the next socket opened.
    package func close() {
        channel.close()
    }
}
