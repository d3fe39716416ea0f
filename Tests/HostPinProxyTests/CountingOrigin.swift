import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// An HTTP origin on `127.0.0.1` that counts the TCP connections it accepts and answers each request
/// as `script` says, each connection served on a thread of its own (blocking sockets, never the
/// cooperative pool).
final class CountingOrigin: Sendable {
    /// What to do with one request.
    enum Action: Sendable {
        /// Send these bytes; then close the connection if `thenClose`.
        case respond(String, thenClose: Bool)
        /// Close the connection without answering (as a server closing an idle connection at the
        /// moment the request arrives).
        case closeWithoutAnswer
    }

    /// One request received: on which accepted connection (0, 1, …) and its request line.
    struct Request: Sendable, Equatable {
        let connection: Int
        let line: String
    }

    let port: UInt16
    private let descriptor: Int32
    private let script: @Sendable (_ connection: Int, _ index: Int) -> Action
    private let state = Mutex<(accepted: Int, requests: [Request], closedByPeer: Int)>((0, [], 0))

    /// `script(connection, index)` decides the answer to request `index` (0, 1, …) of accepted
    /// connection `connection`.
    init(script: @escaping @Sendable (_ connection: Int, _ index: Int) -> Action) throws {
        (descriptor, port) = try TestSockets.bindLoopback(listening: true)
        self.script = script
        Thread { [self] in acceptLoop() }.start()
    }

    deinit { close(descriptor) }

    /// Connections accepted so far.
    var accepted: Int { state.withLock { $0.accepted } }
    /// Requests received so far, in order.
    var requests: [Request] { state.withLock { $0.requests } }
    /// Connections the proxy closed (end of stream while waiting for a request).
    var closedByPeer: Int { state.withLock { $0.closedByPeer } }

    /// Stops accepting (the accept loop ends with the failing `accept`).
    func stop() { shutdown(descriptor, Int32(SHUT_RDWR)) }

    private func acceptLoop() {
        while true {
            let client = accept(descriptor, nil, nil)
            guard client >= 0 else { return }
            let number = state.withLock { state -> Int in
                defer { state.accepted += 1 }
                return state.accepted
            }
            Thread { [self] in serve(client, connection: number) }.start()
        }
    }

    private func serve(_ client: Int32, connection: Int) {
        defer { close(client) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var index = 0
        while true {
            // One request head (these requests have no body).
            var end: Int?
            while end == nil {
                end = Self.endOfHead(received)
                if end != nil { break }
                let count = recv(client, &buffer, buffer.count, 0)
                if count == 0 { state.withLock { $0.closedByPeer += 1 } }
                if count <= 0 { return }
                received.append(contentsOf: buffer[..<count])
            }
            let head = String(decoding: received[..<end!], as: UTF8.self)
            received.removeFirst(end!)
            let line = head.components(separatedBy: "\r\n").first ?? ""
            state.withLock { $0.requests.append(Request(connection: connection, line: line)) }
            switch script(connection, index) {
            case .closeWithoutAnswer:
                return
            case .respond(let text, let thenClose):
                let bytes = Array(text.utf8)
                _ = bytes.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if thenClose { return }
            }
            index += 1
        }
    }

    private static func endOfHead(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4) where bytes[index] == 13 && bytes[index + 1] == 10
            && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index + 4
        }
        return nil
    }

    /// A `200` with a `Content-Length` body, plus `extra` field lines (each ending in CRLF).
    static func ok(_ body: String, extra: String = "") -> String {
        "HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\(extra)\r\n\(body)"
    }
}
