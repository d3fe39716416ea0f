import Foundation
import HostPin
import Synchronization

/// A UDP relay on 127.0.0.1 that holds every datagram for `delay` before forwarding it to `target`, and
/// passes answers straight back. It keeps queries in flight long enough for tests to act on them
/// (cancel one, pile up concurrent misses) without touching the DNS messages: answers are matched to
/// clients by the 16-bit message ID alone (RFC 1035 §4.1.1).
public final class DelayingRelay: Sendable {
    /// Where clients send queries.
    public let address: Upstream
    /// Datagrams received from clients so far.
    public var received: Int { state.withLock { $0.received } }
    /// Every datagram received from clients so far, in order (the queries, as sent).
    public var queries: [[UInt8]] { state.withLock { $0.queries } }

    private struct State {
        var clients: [UInt16: sockaddr_in] = [:]
        var received = 0
        var queries: [[UInt8]] = []
        var stopped = false
    }

    private let front: Int32
    private let back: Int32
    private let state = Mutex(State())

    /// Starts relaying to `target` (a plain IPv4 upstream).
    public init(target: Upstream, delay: Duration) throws {
        let front = try Self.udpSocket()
        var bound = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(front, $0, &length) }
        }
        self.front = front
        back = try Self.udpSocket()
        address = Upstream(address: .loopbackV4, port: UInt16(bigEndian: bound.sin_port))
        let destination = Self.socketAddress(target)
        Thread { [self] in relayQueries(to: destination, delay: delay) }.start()
        Thread { [self] in relayAnswers() }.start()
    }

    private func relayQueries(to destination: sockaddr_in, delay: Duration) {
        var buffer = [UInt8](repeating: 0, count: 65_535)
        while !state.withLock({ $0.stopped }) {
            var client = sockaddr_in()
            var clientLength = socklen_t(MemoryLayout<sockaddr_in>.size)
            let count = withUnsafeMutablePointer(to: &client) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    recvfrom(front, &buffer, buffer.count, 0, $0, &clientLength)
                }
            }
            guard count >= 2 else { continue }
            let packet = Array(buffer[0..<count])
            state.withLock {
                $0.received += 1
                $0.queries.append(packet)
                $0.clients[UInt16(packet[0]) << 8 | UInt16(packet[1])] = client
            }
            let back = back
            DispatchQueue.global().asyncAfter(deadline: .now() + delay.timeInterval) {
                var target = destination
                _ = withUnsafePointer(to: &target) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(back, packet, packet.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
        }
    }

    private func relayAnswers() {
        var buffer = [UInt8](repeating: 0, count: 65_535)
        while !state.withLock({ $0.stopped }) {
            let count = recv(back, &buffer, buffer.count, 0)
            guard count >= 2 else { continue }
            let id = UInt16(buffer[0]) << 8 | UInt16(buffer[1])
            guard var client = state.withLock({ $0.clients[id] }) else { continue }
            _ = withUnsafePointer(to: &client) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(front, buffer, count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }

    /// Stops both threads (within their 100 ms receive timeout) and then closes the sockets, without
    /// blocking the caller (tests call this from Swift's small cooperative pool).
    public func stop() {
        state.withLock { $0.stopped = true }
        let (front, back) = (front, back)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) {
            close(front)
            close(back)
        }
    }

    private static func udpSocket() throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { throw POSIXError(.EADDRINUSE) }
        return fd
    }

    private static func socketAddress(_ upstream: Upstream) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        guard case .plain(let ip, let port) = upstream.kind else { return address }
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr(ip.description)
        return address
    }
}

/// A UDP socket on 127.0.0.1 that receives queries and never answers: an upstream that has gone silent.
public final class BlackHole: Sendable {
    /// The silent server's address.
    public let address: Upstream
    private let fd: Int32

    public init() throws {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        self.fd = fd
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 ? getsockname(fd, pointer, &length) : -1
            }
        }
        guard result == 0 else { throw POSIXError(.EADDRINUSE) }
        address = Upstream(address: .loopbackV4, port: UInt16(bigEndian: local.sin_port))
    }

    deinit { close(fd) }
}

extension Duration {
    var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
