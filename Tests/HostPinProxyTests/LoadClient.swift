import Foundation
import HostPinProxy
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Many blocking HTTP clients at once, for stress and load tests: each runs on a thread of its own
/// (never the cooperative pool, whose two threads the proxy under test needs), with socket timeouts so a
/// stalled exchange fails instead of hanging the test.
enum LoadClient {
    /// How one exchange ended.
    struct Outcome: Sendable {
        let index: Int
        let ok: Bool
        let duration: Duration
        /// What went wrong (empty when `ok`).
        let detail: String
    }

    /// Runs `job(0..<count)` on `parallel` threads, each taking the next index when it is done.
    static func run(count: Int, parallel: Int, _ job: @escaping @Sendable (Int) -> Outcome) async -> [Outcome] {
        let state = Mutex<(next: Int, running: Int, outcomes: [Outcome])>((0, parallel, []))
        return await withCheckedContinuation { (continuation: CheckedContinuation<[Outcome], Never>) in
            for _ in 0..<parallel {
                Thread {
                    while true {
                        let index = state.withLock { state -> Int? in
                            guard state.next < count else { return nil }
                            defer { state.next += 1 }
                            return state.next
                        }
                        guard let index else { break }
                        let outcome = job(index)
                        state.withLock { $0.outcomes.append(outcome) }
                    }
                    let all = state.withLock { state -> [Outcome]? in
                        state.running -= 1
                        return state.running == 0 ? state.outcomes : nil
                    }
                    if let all { continuation.resume(returning: all.sorted { $0.index < $1.index }) }
                }.start()
            }
        }
    }

    /// Opens a connection to `proxy`, sends `request`, reads until the peer closes, and checks the
    /// reply with `accept`. A read or write waiting longer than `timeout` fails the exchange.
    static func exchange(index: Int, proxy: SocketAddress, timeout: Duration, steps: [(send: String, until: String?)],
                         accept: (String) -> Bool) -> Outcome {
        let started = ContinuousClock.now
        func outcome(_ ok: Bool, _ detail: String) -> Outcome {
            Outcome(index: index, ok: ok, duration: ContinuousClock.now - started, detail: detail)
        }
        guard let descriptor = connect(proxy, timeout: timeout) else { return outcome(false, "connect: errno \(errno)") }
        defer { close(descriptor) }
        var received: [UInt8] = []
        for step in steps {
            guard sendAll(descriptor, Array(step.send.utf8)) else { return outcome(false, "send: errno \(errno)") }
            if let marker = step.until {
                // Read until `marker` (e.g. the end of `200 Connection Established`) before the next step.
                while String(decoding: received, as: UTF8.self).range(of: marker) == nil {
                    guard let more = receive(descriptor), !more.isEmpty else {
                        return outcome(false, "stalled or closed before '\(marker.debugDescription)' after \(received.count) bytes")
                    }
                    received.append(contentsOf: more)
                }
            }
        }
        while true {
            guard let more = receive(descriptor) else {
                return outcome(false, "stalled after \(received.count) bytes: \(String(decoding: received, as: UTF8.self).debugDescription)")
            }
            if more.isEmpty { break }
            received.append(contentsOf: more)
        }
        let reply = String(decoding: received, as: UTF8.self)
        return accept(reply) ? outcome(true, "") : outcome(false, "unexpected reply: \(reply.debugDescription)")
    }

    /// Sends `request` again and again on one keep-alive connection to `proxy` until `deadline`, reading
    /// each `Content-Length`-framed response whole; returns the responses received and whether every one
    /// was a `200`.
    static func keepAlive(proxy: SocketAddress, request: String, until deadline: ContinuousClock.Instant)
        -> (responses: Int, ok: Bool)
    {
        guard let descriptor = connect(proxy, timeout: .seconds(10)) else { return (0, false) }
        defer { close(descriptor) }
        var responses = 0
        var buffer: [UInt8] = []
        while ContinuousClock.now < deadline {
            guard sendAll(descriptor, Array(request.utf8)) else { return (responses, false) }
            var end: Int?
            while true {
                end = endOfHead(buffer)
                if end != nil { break }
                guard let more = receive(descriptor), !more.isEmpty else { return (responses, false) }
                buffer.append(contentsOf: more)
            }
            let head = String(decoding: buffer[..<end!], as: UTF8.self)
            guard head.hasPrefix("HTTP/1.1 200 "),
                  let line = head.components(separatedBy: "\r\n").first(where: { $0.lowercased().hasPrefix("content-length:") }),
                  let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
            else { return (responses, false) }
            while buffer.count < end! + length {
                guard let more = receive(descriptor), !more.isEmpty else { return (responses, false) }
                buffer.append(contentsOf: more)
            }
            buffer.removeFirst(end! + length)
            responses += 1
        }
        return (responses, true)
    }

    /// Sends `requests` one at a time on one keep-alive connection to `proxy`, each after the previous
    /// `Content-Length`-framed `200` response has arrived whole; returns the bodies received and, when
    /// the exchange stopped early, why: `closed before a response` or `reset before a response` (the
    /// proxy ended the connection between two responses), or what else went wrong (a timeout of
    /// `timeout`, a connection cut mid-response, another status).
    static func inTurn(proxy: SocketAddress, timeout: Duration, requests: [String]) -> (bodies: [String], failure: String?) {
        guard let descriptor = connect(proxy, timeout: timeout) else { return ([], "connect: errno \(errno)") }
        defer { close(descriptor) }
        var bodies: [String] = []
        var buffer: [UInt8] = []
        var scratch = [UInt8](repeating: 0, count: 65_536)
        for request in requests {
            guard sendAll(descriptor, Array(request.utf8)) else {
                return (bodies, errno == ECONNRESET || errno == EPIPE ? "reset before a response" : "send: errno \(errno)")
            }
            var end: Int?
            while true {
                end = endOfHead(buffer)
                if end != nil { break }
                let count = recv(descriptor, &scratch, scratch.count, 0)
                if count == 0 && buffer.isEmpty { return (bodies, "closed before a response") }
                if count < 0 && errno == ECONNRESET && buffer.isEmpty { return (bodies, "reset before a response") }
                guard count > 0 else { return (bodies, "head cut after \(buffer.count) bytes (errno \(errno))") }
                buffer.append(contentsOf: scratch[..<count])
            }
            let head = String(decoding: buffer[..<end!], as: UTF8.self)
            guard head.hasPrefix("HTTP/1.1 200 "),
                  let line = head.components(separatedBy: "\r\n").first(where: { $0.lowercased().hasPrefix("content-length:") }),
                  let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
            else { return (bodies, "unexpected head \(head.debugDescription)") }
            while buffer.count < end! + length {
                let count = recv(descriptor, &scratch, scratch.count, 0)
                guard count > 0 else { return (bodies, "body cut after \(buffer.count - end!) of \(length) bytes (errno \(errno))") }
                buffer.append(contentsOf: scratch[..<count])
            }
            bodies.append(String(decoding: buffer[end!..<(end! + length)], as: UTF8.self))
            buffer.removeFirst(end! + length)
        }
        return (bodies, nil)
    }

    /// The offset just past the first CRLF CRLF of `bytes`.
    static func endOfHead(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4) where bytes[index] == 13 && bytes[index + 1] == 10
            && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index + 4
        }
        return nil
    }

    /// A blocking IPv4 connection to `target` whose reads and writes give up after `timeout`.
    static func connect(_ target: SocketAddress, timeout: Duration) -> Int32? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        let seconds = timeout.components.seconds
        let microseconds = timeout.components.attoseconds / 1_000_000_000_000
        var limit = timeval(tv_sec: Int(seconds), tv_usec: Int(microseconds))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = target.port.bigEndian
        address.sin_addr.s_addr = inet_addr(target.address.description)
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard status == 0 else {
            close(descriptor)
            return nil
        }
        return descriptor
    }

    private static func sendAll(_ descriptor: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// The next bytes (empty at end of stream), or `nil` when the read failed or timed out.
    private static func receive(_ descriptor: Int32) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        return count < 0 ? nil : Array(buffer[..<count])
    }
}
