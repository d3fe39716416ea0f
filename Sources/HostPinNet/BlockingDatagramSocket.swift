import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A UDP socket bound to one address for a thread of its own: receiving blocks the calling thread,
/// sending never waits. It is not on the ``EventLoop``: a socket there wakes the loop's thread for every
/// datagram received and every one sent (edge-triggered readiness), which cost the DNS stub about a
/// fifth of its CPU time under load (perf, cpu-clock; Benchmarks/README.md, item 7).
///
/// One thread receives; any number of threads or tasks may send. Never receive on Swift's cooperative
/// pool or Dispatch's global queues: the call blocks.
package final class BlockingDatagramSocket: Sendable {
    /// Where the socket is bound (with the kernel's port when port 0 was asked for).
    package let boundAddress: SocketAddress
    private let descriptor: Int32
    /// Set by ``shutdown()``, before the system call that wakes a blocked receive.
    private let shut = Atomic<Bool>(false)
    /// Set by ``close()``: the descriptor is closed once.
    private let closed = Atomic<Bool>(false)

    /// Opens a UDP socket bound to `address`, as ``DatagramSocket/init(binding:receiveBuffer:)`` does.
    ///
    /// - Throws: ``SocketError/system(call:errno:)`` from `socket` or `bind` (`EADDRINUSE`, `EACCES`,
    ///   `EADDRNOTAVAIL`).
    package init(binding address: SocketAddress, receiveBuffer: Int? = nil) throws(SocketError) {
        (descriptor, boundAddress) = try Self.open(binding: address, receiveBuffer: receiveBuffer, flags: 0)
    }

    deinit {
        close()
    }

    /// Blocks until the next datagram, reads it into `buffer` and returns a copy of its own size.
    ///
    /// - Parameter buffer: At least ``DatagramSocket/maximumDatagram`` octets, used by this call alone.
    /// - Throws: ``SocketError``: `.closed` once ``shutdown()`` was called (a receive blocked then
    ///   returns at once), `.system(call: "recvfrom", …)`.
    package func receive(into buffer: UnsafeMutableRawBufferPointer) throws(SocketError) -> Datagram {
        precondition(buffer.count >= DatagramSocket.maximumDatagram, "a receive buffer smaller than the largest datagram")
        while true {
            if shut.load(ordering: .acquiring) { throw .closed }
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            var failure: Int32 = 0
            let count = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    let count = recvfrom(descriptor, buffer.baseAddress, buffer.count, 0, $0, &length)
                    failure = errno
                    return count
                }
            }
            if count >= 0 {
                // After shutdown the kernel returns 0 octets from no one; a family other than IPv4 and
                // IPv6 cannot reach an IP socket.
                guard let source = SocketAddress(storage: storage) else { continue }
                return Datagram(bytes: Array(UnsafeRawBufferPointer(rebasing: buffer[..<count])), source: source)
            }
            switch failure {
            case EINTR, EAGAIN, EWOULDBLOCK: continue
            default: throw .system(call: "recvfrom", errno: failure)
            }
        }
    }

    /// Sends `bytes` as one datagram to `destination`, without waiting.
    ///
    /// - Returns: `false` when the kernel's send buffer is full and the datagram was dropped.
    /// - Throws: ``SocketError``: `.closed` after ``shutdown()``, `.system(call: "sendto", …)`.
    @discardableResult
    package func send(_ bytes: [UInt8], to destination: SocketAddress) throws(SocketError) -> Bool {
        while true {
            if shut.load(ordering: .relaxed) { throw .closed }
            let sent = bytes.withUnsafeBytes { raw in
                destination.withSockaddr { sendto(descriptor, raw.baseAddress, raw.count, Int32(MSG_DONTWAIT), $0, $1) }
            }
            if sent >= 0 { return true }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK, ENOBUFS: return false
            case let failure: throw .system(call: "sendto", errno: failure)
            }
        }
    }

    /// Fails every later receive and send with ``SocketError/closed``, and wakes a receive blocked in
    /// the kernel (`shutdown(2)` wakes the socket's waiters even when it is not connected). Safe from
    /// any thread; idempotent; the descriptor stays open until ``close()``.
    package func shutdown() {
        guard !shut.exchange(true, ordering: .acquiringAndReleasing) else { return }
        _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
    }

    /// Closes the descriptor. Idempotent. Call it once no receive or send is running (after
    /// ``shutdown()`` and the end of the thread receiving): a descriptor number is reused at once.
    package func close() {
        shutdown()
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        Glibc.close(descriptor)
    }

    /// A UDP socket (close-on-exec, with `flags` such as `SOCK_NONBLOCK`) bound to `address`, and the
    /// address it is bound to: what ``DatagramSocket`` and this type open.
    static func open(binding address: SocketAddress, receiveBuffer: Int?, flags: Int32) throws(SocketError)
        -> (descriptor: Int32, bound: SocketAddress)
    {
        let domain = address.address.family == .v4 ? AF_INET : AF_INET6
        let descriptor = socket(domain, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | flags, 0)
        guard descriptor >= 0 else { throw .system(call: "socket", errno: errno) }
        if var size = receiveBuffer.map(Int32.init(clamping:)) {
            _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        if address.address.family == .v6 {
            var one: Int32 = 1
            _ = setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        guard address.withSockaddr({ bind(descriptor, $0, $1) }) == 0,
              let bound = SocketAddress.of(socket: descriptor, peer: false)
        else {
            let failure = errno
            Glibc.close(descriptor)
            throw .system(call: "bind", errno: failure)
        }
        return (descriptor, bound)
    }
}
