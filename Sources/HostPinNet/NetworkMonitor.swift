// SOCK_RAW, SOCK_NONBLOCK, MSG_DONTWAIT: <sys/socket.h>'s constants are found through CEpoll's import of it
// in a release build, not through Glibc's (as DatagramSocket.swift says).
import CEpoll
import HostPin
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Watches the host's network for changes (issue 30): a `NETLINK_ROUTE` socket subscribed to the link,
/// IPv4/IPv6 address and IPv4/IPv6 route groups, read on the shared ``EventLoop`` (no thread of its own:
/// the socket waits for the loop's edges as any other), each message judged by ``NetlinkClassifier``,
/// bursts gathered by ``NetworkChangeDebouncer`` (about 1 s) into one ``NetworkChange`` on ``changes``.
///
/// `ENOBUFS` on the socket (the kernel dropped notifications the socket had no room for) counts as a
/// change, ``NetworkChange/eventsLost``, and the monitor asks the kernel for what is there again.
///
/// A service or an app starts one, reads ``changes`` (`for await change in monitor.changes`) and calls
/// ``stop()`` when done; the sequence then ends.
public final class NetworkMonitor: Sendable {
    /// The changes, one per burst, in order. Ends after ``stop()``. Holds the 8 newest not yet read.
    public let changes: AsyncStream<NetworkChange>
    private let continuation: AsyncStream<NetworkChange>.Continuation
    private let channel: SocketChannel
    private let task: Mutex<Task<Void, Never>?>

    // <linux/netlink.h>, <linux/rtnetlink.h> (see ``NetlinkMessage``).
    private static let familyNetlink: Int32 = 16          // AF_NETLINK
    private static let protocolRoute: Int32 = 0           // NETLINK_ROUTE
    private static let groups: UInt32 = 0x1 | 0x10 | 0x40 | 0x100 | 0x400
    // RTMGRP_LINK, RTMGRP_IPV4_IFADDR, RTMGRP_IPV4_ROUTE, RTMGRP_IPV6_IFADDR, RTMGRP_IPV6_ROUTE
    private static let dumps = [NetlinkMessage.getLink, NetlinkMessage.getAddress, NetlinkMessage.getRoute]

    /// Opens the socket and starts watching.
    ///
    /// - Parameters:
    ///   - quiet: How long without a notification ends a burst (``NetworkChangeDebouncer/quiet``); 1 s.
    ///   - longest: The most a burst is held after its first notification; 5 s.
    /// - Throws: ``SocketError/system(call:errno:)`` when the socket cannot be opened or bound (a sandbox
    ///   without netlink: `EAFNOSUPPORT`, `EPERM`, `EACCES`): the caller says so once and goes on without.
    public init(quiet: Duration = .seconds(1), longest: Duration = .seconds(5)) throws(SocketError) {
        let descriptor = socket(Self.familyNetlink, Int32(SOCK_RAW.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
                                | Int32(SOCK_CLOEXEC.rawValue), Self.protocolRoute)
        guard descriptor >= 0 else { throw .system(call: "socket", errno: errno) }
        // A burst of a few thousand messages (a VPN's routes) fits without ENOBUFS.
        var size: Int32 = 1 << 20
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        // sockaddr_nl: family (2), pad (2), pid (4, 0: the kernel assigns one), groups (4).
        var address: [UInt8] = []
        address.appendUInt16(UInt16(Self.familyNetlink))
        address.appendUInt16(0)
        address.appendUInt32(0)
        address.appendUInt32(Self.groups)
        let bound = address.withUnsafeBytes {
            bind(descriptor, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t($0.count))
        }
        guard bound == 0 else {
            let failure = errno
            _ = Glibc.close(descriptor)
            throw .system(call: "bind", errno: failure)
        }
        var local = [UInt8](repeating: 0, count: 12)
        var length = socklen_t(12)
        let named = local.withUnsafeMutableBytes {
            getsockname(descriptor, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), &length)
        }
        let port = named == 0 ? local.uint32(at: 4) : 0
        channel = try SocketChannel(descriptor: descriptor, peer: nil)
        (changes, continuation) = AsyncStream.makeStream(of: NetworkChange.self, bufferingPolicy: .bufferingNewest(8))
        task = Mutex(nil)
        let (channel, continuation) = (channel, continuation)
        let debouncer = NetworkChangeDebouncer(quiet: quiet, longest: longest)
        let watch = Task(executorPreference: EventLoop.shared) {
            await Self.watch(channel, port: port, debouncer: debouncer, continuation: continuation)
        }
        task.withLock { $0 = watch }
    }

    deinit {
        stop()
    }

    /// Stops watching: closes the socket and ends ``changes`` (a burst under way is dropped). Idempotent.
    public func stop() {
        channel.shutdown()
        task.withLock { $0?.cancel() }
        continuation.finish()
    }

    /// The watching task: dumps what is there, then reads notifications until the socket is shut down.
    private static func watch(_ channel: SocketChannel, port: UInt32, debouncer: NetworkChangeDebouncer,
                              continuation: AsyncStream<NetworkChange>.Continuation) async {
        var classifier = NetlinkClassifier(port: port)
        var debouncer = debouncer
        var sequence: UInt32 = 0
        var dumping = 0  // index into `dumps` of the dump under way; `dumps.count` when none is
        func startDump(_ index: Int) {
            dumping = index
            guard index < dumps.count else { return }
            sequence &+= 1
            if sequence == 0 { sequence = 1 }
            send(NetlinkMessage.dumpRequest(dumps[index], sequence: sequence), on: channel.descriptor)
        }
        startDump(0)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 8)
        defer { buffer.deallocate() }
        while !channel.isShut {
            let count = recv(channel.descriptor, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
            let failure = errno
            let now = ContinuousClock.now
            if count > 0 {
                for message in NetlinkMessage.messages(in: UnsafeRawBufferPointer(rebasing: buffer[..<count])) {
                    switch classifier.read(message) {
                    case .event(let event): debouncer.note(event, at: now)
                    case .nothing: break
                    case .dumpDone(let done): if done == sequence, dumping < dumps.count { startDump(dumping + 1) }
                    }
                }
            } else if count < 0, failure == ENOBUFS {
                // Notifications were lost: anything may have changed, and the tables may be wrong.
                debouncer.note(.eventsLost, at: now)
                classifier.reset()
                startDump(0)
            } else if count < 0, failure == EAGAIN || failure == EWOULDBLOCK || failure == EINTR {
                if let change = debouncer.take(at: now) { continuation.yield(change) }
                do {
                    try await channel.waitReadable(deadline: debouncer.deadline)
                } catch .timedOut {
                    continue
                } catch {
                    break
                }
                continue
            } else {
                break  // shut down (EBADF after close) or an error netlink does not otherwise give
            }
            // A flood that never empties the socket still ends its burst at `longest`.
            if let change = debouncer.take(at: now) { continuation.yield(change) }
        }
        continuation.finish()
    }

    private static func send(_ message: NetlinkMessage, on descriptor: Int32) {
        var kernel: [UInt8] = []
        kernel.appendUInt16(UInt16(familyNetlink))
        kernel.appendUInt16(0)
        kernel.appendUInt32(0)
        kernel.appendUInt32(0)
        let bytes = message.bytes
        _ = bytes.withUnsafeBytes { raw in
            kernel.withUnsafeBytes { to in
                sendto(descriptor, raw.baseAddress, raw.count, Int32(MSG_DONTWAIT),
                       to.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(to.count))
            }
        }
    }
}
