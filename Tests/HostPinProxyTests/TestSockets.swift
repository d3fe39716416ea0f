import Dispatch
import Foundation
import HostPin
import HostPinNet
import HostPinProxy

#if canImport(Glibc)
import Glibc
#endif

/// Blocking sockets for tests, run on Dispatch threads (never on the cooperative pool): a raw client
/// that sends exact bytes, an origin that never answers, and an origin that answers one scripted reply.
enum TestSockets {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Connects to `address`, sends `request`, and returns everything received until the peer closes
    /// (or 10 s pass).
    static func exchange(_ address: SocketAddress, _ request: [UInt8]) async throws -> String {
        try await offPool {
            let descriptor = try connectBlocking(address)
            defer { close(descriptor) }
            try sendAll(descriptor, request)
            return String(decoding: receiveAll(descriptor), as: UTF8.self)
        }
    }

    /// A socket on `127.0.0.1` that listens but never accepts: the kernel completes the handshake, and
    /// then nothing ever answers.
    final class SilentOrigin: Sendable {
        let port: UInt16
        private let descriptor: Int32

        init() throws {
            (descriptor, port) = try TestSockets.bindLoopback(listening: true)
        }

        deinit { close(descriptor) }
    }

    /// A port on `127.0.0.1` bound but never listening: a connection to it is refused, and while it
    /// lives no other socket (another test's proxy on port 0) can be given that port.
    final class RefusingPort: Sendable {
        let port: UInt16
        private let descriptor: Int32

        init() throws {
            (descriptor, port) = try TestSockets.bindLoopback(listening: false)
        }

        deinit { close(descriptor) }
    }

    /// Opens `count` connections to `address` one after another, each sending `request` and then
    /// resetting at once (`SO_LINGER` 0), so that some are reset before the proxy has accepted them.
    /// Returns the clients' addresses.
    static func resetAfterSending(_ address: SocketAddress, _ request: [UInt8], count: Int) async throws -> [SocketAddress] {
        try await offPool {
            var clients: [SocketAddress] = []
            for _ in 0..<count {
                let descriptor = try connectBlocking(address)
                var local = sockaddr_storage()
                var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
                _ = withUnsafeMutablePointer(to: &local) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
                }
                if let client = SocketAddress(storage: local) { clients.append(client) }
                try? sendAll(descriptor, request)
                reset(descriptor)
            }
            return clients
        }
    }

    /// Closes `descriptor` with a reset (RST) instead of a FIN: `SO_LINGER` on with a zero timeout.
    static func reset(_ descriptor: Int32) {
        var abort = linger(l_onoff: 1, l_linger: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &abort, socklen_t(MemoryLayout<linger>.size))
        close(descriptor)
    }

    /// Accepts one connection on `127.0.0.1`, reads the request head, writes `response`, and closes:
    /// with a FIN, after reading until the proxy closes, or when `reset`, at once with a reset (an origin
    /// that vanishes). Returns the port and a task yielding the request head it received.
    static func scriptedOrigin(response: [UInt8], reset: Bool = false) throws -> (port: UInt16, request: Task<String, any Error>) {
        let (descriptor, port) = try bindLoopback(listening: true)
        let task = Task {
            try await offPool {
                defer { close(descriptor) }
                let client = accept(descriptor, nil, nil)
                guard client >= 0 else { throw Failure(description: "accept failed") }
                var received: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 4096)
                while !received.ends(with: Array("\r\n\r\n".utf8)) {
                    let count = recv(client, &buffer, buffer.count, 0)
                    if count <= 0 { break }
                    received.append(contentsOf: buffer[..<count])
                }
                let sent = Result { () throws -> Void in try sendAll(client, response) }
                if reset {
                    TestSockets.reset(client)
                } else {
                    shutdown(client, Int32(SHUT_WR))
                    _ = receiveAll(client)
                    close(client)
                }
                try sent.get()
                return String(decoding: received, as: UTF8.self)
            }
        }
        return (port, task)
    }

    /// Runs blocking `work` on a thread of its own: a new serial queue (Dispatch gives each one an
    /// overcommitting thread), not `DispatchQueue.global()`, whose width is the core count (two here), so
    /// a few blocked test helpers would starve every other global work item, ProcessRunner's pipe
    /// readers included.
    static func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue(label: "hostpin.proxy.tests.blocking").async { continuation.resume(with: Result { try work() }) }
        }
    }

    /// A TCP socket bound to `127.0.0.1` on a free port (listening when `listening`, with `backlog`
    /// connections queued at most), and that port.
    static func bindLoopback(listening: Bool, backlog: Int32 = 16) throws -> (Int32, UInt16) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, !listening || listen(descriptor, backlog) == 0 else {
            close(descriptor)
            throw Failure(description: listening ? "bind/listen failed" : "bind failed")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return (descriptor, UInt16(bigEndian: address.sin_port))
    }

    /// Sends `request` to `address` and reads until end of stream, sleeping `pause` after every
    /// `pauseEvery` bytes (a slow reader: the sender's buffers fill up). Blocking: call it off the pool.
    static func slowExchange(_ address: SocketAddress, _ request: [UInt8], pauseEvery: Int, pause: Duration) throws -> [UInt8] {
        let descriptor = try connectBlocking(address)
        defer { close(descriptor) }
        try sendAll(descriptor, request)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        var sincePause = 0
        let (seconds, attoseconds) = pause.components
        let microseconds = UInt32(seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            received.append(contentsOf: buffer[..<count])
            sincePause += count
            if sincePause >= pauseEvery {
                sincePause = 0
                usleep(microseconds)
            }
        }
        return received
    }

    static func connectBlocking(_ target: SocketAddress) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = target.port.bigEndian
        address.sin_addr.s_addr = inet_addr(target.address.description)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard status == 0 else {
            close(descriptor)
            throw Failure(description: "connect to \(target) failed")
        }
        return descriptor
    }

    static func sendAll(_ descriptor: Int32, _ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw Failure(description: "send failed") }
            offset += sent
        }
    }

    private static func receiveAll(_ descriptor: Int32) -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count <= 0 { return received }
            received.append(contentsOf: buffer[..<count])
        }
    }
}

extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
    }
}
