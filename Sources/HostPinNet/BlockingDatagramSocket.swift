import CEpoll
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

    /// Blocks until a datagram has come, then takes those already waiting behind it too, up to the
    /// batch's capacity (`recvmmsg(2)` with `MSG_WAITFORONE`): one system call for a burst.
    ///
    /// - Returns: The datagrams in the order received; empty when the kernel woke the call without one
    ///   (the caller calls again).
    /// - Throws: ``SocketError``: `.closed` once ``shutdown()`` was called, `.system(call: "recvmmsg", …)`.
    package func receive(into batch: DatagramBatch) throws(SocketError) -> [Datagram] {
        while true {
            if shut.load(ordering: .acquiring) { throw .closed }
            for index in 0..<batch.capacity {
                // A message the kernel leaves unfilled (after shutdown) reads as no address.
                batch.addresses[index].ss_family = sa_family_t(AF_UNSPEC)
                batch.prepare(index, length: DatagramSocket.maximumDatagram,
                              addressLength: socklen_t(MemoryLayout<sockaddr_storage>.size))
            }
            let count = recvmmsg(descriptor, batch.headers, UInt32(batch.capacity), HOSTPIN_MSG_WAITFORONE, nil)
            if count >= 0 {
                var datagrams: [Datagram] = []
                datagrams.reserveCapacity(Int(count))
                for index in 0..<Int(count) {
                    guard let source = SocketAddress(storage: batch.addresses[index]) else { continue }
                    let buffer = batch.buffer(index)
                    datagrams.append(Datagram(bytes: Array(UnsafeRawBufferPointer(rebasing: buffer[..<Int(batch.headers[index].msg_len)])),
                                              source: source))
                }
                return datagrams
            }
            switch errno {
            case EINTR, EAGAIN, EWOULDBLOCK: continue
            case let failure: throw .system(call: "recvmmsg", errno: failure)
            }
        }
    }

    /// Sends each of `datagrams` to its destination without waiting, as few system calls as the
    /// kernel takes (`sendmmsg(2)`). A datagram the kernel has no buffer for is dropped with those after
    /// it, as ``send(_:to:)`` drops one; one it refuses (an unreachable destination) is skipped.
    ///
    /// - Parameter batch: Its buffers are overwritten (each datagram is copied in: the calls, not the
    ///   copies, are the cost); `datagrams` may be more than its capacity.
    /// - Throws: ``SocketError/closed`` after ``shutdown()``.
    package func send(_ datagrams: [(bytes: [UInt8], destination: SocketAddress)], using batch: DatagramBatch) throws(SocketError) {
        var start = 0
        while start < datagrams.count {
            let end = min(datagrams.count, start + batch.capacity)
            for (index, datagram) in datagrams[start..<end].enumerated() {
                let length = min(datagram.bytes.count, DatagramSocket.maximumDatagram)
                datagram.bytes.withUnsafeBytes { batch.buffer(index).copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[..<length])) }
                let addressLength = datagram.destination.withSockaddr { pointer, length in
                    UnsafeMutableRawPointer(batch.addresses + index).copyMemory(from: pointer, byteCount: Int(length))
                    return length
                }
                batch.prepare(index, length: length, addressLength: addressLength)
            }
            var sent = 0
            while sent < end - start {
                if shut.load(ordering: .relaxed) { throw .closed }
                let count = sendmmsg(descriptor, batch.headers + sent, UInt32(end - start - sent), Int32(MSG_DONTWAIT))
                if count > 0 { sent += Int(count); continue }
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK, ENOBUFS: return
                default: sent += 1  // this one refused (sendmmsg reports the first message's failure)
                }
            }
            start = end
        }
    }

    /// Sends `bytes` as one datagram to `destination`, without waiting.
    ///
    /// - Returns: `false` when the kernel's send buffer is full and the datagram was dropped.
    /// - Throws: ``SocketError``: `.closed` after ``shutdown()``, `.system(call: "sendto", …)`.
    @discardableResult
    package func send(_ bytes: [UInt8], to destination: SocketAddress) throws(SocketError) -> Bool {
        try Self.send(bytes, to: destination, on: descriptor, flags: Int32(MSG_DONTWAIT)) { shut.load(ordering: .relaxed) }
    }

    /// `sendto(2)` of `bytes` to `destination` on `descriptor`, again after `EINTR`: what ``DatagramSocket``
    /// and this type send with. `false` when the kernel has no buffer for it (the datagram is dropped).
    static func send(_ bytes: [UInt8], to destination: SocketAddress, on descriptor: Int32, flags: Int32,
                     isShut: () -> Bool) throws(SocketError) -> Bool {
        while true {
            if isShut() { throw .closed }
            let sent = bytes.withUnsafeBytes { raw in
                destination.withSockaddr { sendto(descriptor, raw.baseAddress, raw.count, flags, $0, $1) }
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
