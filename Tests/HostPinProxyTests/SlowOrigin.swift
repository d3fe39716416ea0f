import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// An HTTP origin on `127.0.0.1` that answers every request after `delay` with `200` and the body
/// `slow <path>\n`, keeping the connection open unless the request says `Connection: close`. Each
/// connection is served on a thread of its own (blocking sockets, never the cooperative pool), so it
/// serves as many clients in parallel as a load test opens.
final class SlowOrigin: Sendable {
    let port: UInt16
    private let descriptor: Int32
    private let delay: Duration
    private let served = Mutex(0)
    private let received = Mutex(0)

    init(delay: Duration) throws {
        (descriptor, port) = try TestSockets.bindLoopback(listening: true, backlog: 1024)
        self.delay = delay
        Thread { [self] in acceptLoop() }.start()
    }

    deinit { close(descriptor) }

    /// Requests answered so far.
    var requests: Int { served.withLock { $0 } }

    /// Request heads received so far (counted before the delay).
    var heads: Int { received.withLock { $0 } }

    /// Stops accepting (the accept loop ends with the failing `accept`).
    func stop() { shutdown(descriptor, Int32(SHUT_RDWR)) }

    /// The body answered to a request for `path`.
    static func body(for path: String) -> String { "slow \(path)\n" }

    private func acceptLoop() {
        while true {
            let client = accept(descriptor, nil, nil)
            guard client >= 0 else {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            Thread { [self] in serve(client) }.start()
        }
    }

    private func serve(_ client: Int32) {
        defer { close(client) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let (seconds, attoseconds) = delay.components
        let microseconds = UInt32(seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
        while true {
            var end: Int?
            while true {
                end = LoadClient.endOfHead(received)
                if end != nil { break }
                let count = recv(client, &buffer, buffer.count, 0)
                if count <= 0 { return }
                received.append(contentsOf: buffer[..<count])
            }
            let head = String(decoding: received[..<end!], as: UTF8.self)
            received.removeFirst(end!)
            self.received.withLock { $0 += 1 }
            let line = head.prefix { $0 != "\r" }.split(separator: " ")
            let path = line.count > 1 ? String(line[1]) : "?"
            let closing = head.lowercased().contains("\r\nconnection: close\r\n")
            usleep(microseconds)
            let body = Self.body(for: path)
            let response = "HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n"
                + (closing ? "Connection: close\r\n" : "") + "\r\n" + body
            let bytes = Array(response.utf8)
            let sent = bytes.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            served.withLock { $0 += 1 }
            if sent != bytes.count || closing { return }
        }
    }
}
