import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A TCP relay on a loopback address that accepts at once but holds each connection for `delay` before
/// it connects to `target` and relays bytes both ways: a TLS origin behind it answers the ClientHello
/// `delay` late (this machine's kernel has no `netem` to delay packets). Open for the duration of `body`;
/// each connection's two threads end when either side closes.
public enum SlowHandshakeRelay {
    /// Listens on `address`:`port` (an IPv4 loopback address) and relays to `targetAddress`:`port`.
    public static func with<T>(address: String, port: UInt16, targetAddress: String, delay: Duration,
                               _ body: () async throws -> T) async throws -> T {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw LoopbackSocket.SocketError(call: "socket", code: errno) }
        var reuse: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var local = socketAddress(address, port)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 64) == 0 else {
            let code = errno
            close(listener)
            throw LoopbackSocket.SocketError(call: "bind/listen \(address):\(port)", code: code)
        }
        let target = socketAddress(targetAddress, port)
        Thread { accept(from: listener, to: target, delay: delay) }.start()
        defer { shutdown(listener, Int32(SHUT_RDWR)); close(listener) }
        return try await body()
    }

    private static func socketAddress(_ text: String, _ port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr(text)
        return address
    }

    private static func accept(from listener: Int32, to target: sockaddr_in, delay: Duration) {
        while true {
            let client = Glibc.accept(listener, nil, nil)
            guard client >= 0 else { return }  // the listener was shut down
            Thread {
                Thread.sleep(forTimeInterval: Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18)
                let origin = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
                var address = target
                let connected = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(origin, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
                guard origin >= 0, connected == 0 else {
                    close(client)
                    if origin >= 0 { close(origin) }
                    return
                }
                let done = DispatchGroup()
                done.enter()
                Thread {
                    pump(from: origin, to: client)
                    done.leave()
                }.start()
                pump(from: client, to: origin)
                done.wait()
                close(client)
                close(origin)
            }.start()
        }
    }

    /// Copies bytes until `source` ends or fails, then ends `destination`'s writing side.
    private static func pump(from source: Int32, to destination: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = read(source, &buffer, buffer.count)
            guard count > 0 else { break }
            var sent = 0
            while sent < count {
                // MSG_NOSIGNAL: a client that closed first (a probe's handshake, done before the origin's
                // session tickets arrive) must be an EPIPE here, not a SIGPIPE that kills the test process.
                let written = buffer[sent..<count].withUnsafeBytes {
                    send(destination, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                guard written > 0 else { break }
                sent += written
            }
            guard sent == count else { break }
        }
        shutdown(destination, Int32(SHUT_WR))
        shutdown(source, Int32(SHUT_RD))
    }
}
