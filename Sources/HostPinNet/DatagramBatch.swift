import CEpoll

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The memory of one `recvmmsg(2)` or `sendmmsg(2)` call (``BlockingDatagramSocket/receive(into:)``,
/// ``BlockingDatagramSocket/send(_:using:)``): a buffer of ``DatagramSocket/maximumDatagram`` octets,
/// an address and a message header per datagram. A batch moves up to ``capacity`` datagrams per system
/// call where one `recvfrom` or `sendto` moves one: on a busy stub the calls, not the copies, were the
/// cost (perf, cpu-clock; Benchmarks/README.md, item 7).
///
/// Owned by one thread (not `Sendable`): its buffers are reused by every call. The buffers are
/// reserved, not touched, so a datagram costs resident memory only for the pages it fills.
package final class DatagramBatch {
    /// The most datagrams one call moves.
    package let capacity: Int
    let buffers: UnsafeMutableRawBufferPointer
    let addresses: UnsafeMutablePointer<sockaddr_storage>
    let vectors: UnsafeMutablePointer<iovec>
    let headers: UnsafeMutablePointer<hostpin_mmsghdr>

    /// - Parameter capacity: Datagrams per call, at least 1.
    package init(capacity: Int = 32) {
        self.capacity = max(1, capacity)
        buffers = .allocate(byteCount: self.capacity * DatagramSocket.maximumDatagram, alignment: 16)
        addresses = .allocate(capacity: self.capacity)
        vectors = .allocate(capacity: self.capacity)
        headers = .allocate(capacity: self.capacity)
        for index in 0..<self.capacity {
            vectors[index] = iovec(iov_base: buffer(index).baseAddress, iov_len: 0)
        }
    }

    deinit {
        buffers.deallocate()
        addresses.deallocate()
        vectors.deallocate()
        headers.deallocate()
    }

    /// The buffer of datagram `index`.
    func buffer(_ index: Int) -> UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(rebasing: buffers[index * DatagramSocket.maximumDatagram ..< (index + 1) * DatagramSocket.maximumDatagram])
    }

    /// Points header `index` at its buffer (`length` octets of it) and its address (`addressLength`).
    func prepare(_ index: Int, length: Int, addressLength: socklen_t) {
        vectors[index].iov_len = length
        var header = msghdr()
        header.msg_name = UnsafeMutableRawPointer(addresses + index)
        header.msg_namelen = addressLength
        header.msg_iov = vectors + index
        header.msg_iovlen = 1
        headers[index] = hostpin_mmsghdr(msg_hdr: header, msg_len: 0)
    }
}
