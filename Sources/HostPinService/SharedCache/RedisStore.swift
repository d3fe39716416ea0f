import CHiredis
import Foundation
import HostPin

/// The shared cache's store in Redis, through hiredis 0.14's synchronous API on one thread of its own —
/// never the cooperative pool nor Dispatch's global queues (docs/ARCHITECTURE.md, "Shared cache").
///
/// Requests wait in a bounded queue (``queueLimit``); the thread takes every request waiting, pipelines
/// them (`GET key`, `SET key value EX seconds`) and reads their replies, each connection's reads and
/// writes bounded by ``timeout`` (100 ms); a second thread hands the replies out, in order. A timeout or an error closes the connection and fails what was
/// sent and what waits; while disconnected a `get` fails at once on the caller's thread and a `set` is
/// dropped, and the thread reconnects in the background with backoff (``firstBackoff`` doubling up to
/// ``maximumBackoff``), sending `AUTH` (the password file's) and `SELECT` (the URL's database) first,
/// then `PING`. So a Redis that is down or hung costs a lookup at most the caller's own patience.
public final class RedisStore: SharedCacheStore, @unchecked Sendable {
    // @unchecked: every stored `var` below is read and written only while `condition` is locked; the
    // hiredis context lives on the thread's stack alone.

    /// A connection's connect, read and write timeout.
    public static let timeout: Duration = .milliseconds(100)
    /// The most requests waiting; more fail (a `get`) or are dropped (a `set`).
    public static let queueLimit = 4096
    /// The first wait before reconnecting.
    public static let firstBackoff: Duration = .milliseconds(100)
    /// The longest wait between reconnections.
    public static let maximumBackoff: Duration = .seconds(2)

    /// Where Redis listens.
    public let endpoint: RedisEndpoint
    private let password: [UInt8]?

    private enum Request {
        case get(String, enqueued: UInt64, arrived: @Sendable () -> Void, reply: @Sendable (SharedCacheReply) -> Void)
        case set(String, [UInt8], seconds: UInt32)
    }

    private let condition = NSCondition()
    /// Hands replies out in order on a second thread, so that reading and checking values and answering
    /// clients never holds up the next batch's input and output.
    private let replies = ReplyThread()
    private var queue: [Request] = []
    private var connected = false
    private var closed = false
    private var connections = 0

    /// Starts the store's thread, which connects to `endpoint` (with `password`, when given, for `AUTH`).
    public init(endpoint: RedisEndpoint, password: [UInt8]? = nil) {
        self.endpoint = endpoint
        self.password = password
        let thread = Thread { [self] in run() }
        thread.name = "hostpin-redis"
        thread.start()
    }

    /// Whether the store is connected now.
    public var isConnected: Bool { locked { connected } }

    /// How many connections the store has made (a reconnection counts).
    public var connectionCount: Int { locked { connections } }

    public func get(_ key: String, arrived: @escaping @Sendable () -> Void,
                    reply: @escaping @Sendable (SharedCacheReply) -> Void) {
        let accepted = locked { () -> Bool in
            guard connected, !closed, queue.count < Self.queueLimit else { return false }
            queue.append(.get(key, enqueued: Self.now(), arrived: arrived, reply: reply))
            condition.signal()
            return true
        }
        if !accepted {
            arrived()
            reply(.failed)
        }
    }

    public func set(_ key: String, value: [UInt8], seconds: UInt32) {
        locked {
            guard connected, !closed, queue.count < Self.queueLimit else { return }
            queue.append(.set(key, value, seconds: max(1, seconds)))
            condition.signal()
        }
    }

    /// Stops the thread: the connection is closed and what waits fails. Later calls fail at once.
    public func close() {
        let waiting = locked { () -> [Request] in
            closed = true
            connected = false
            defer { queue = [] }
            condition.signal()
            return queue
        }
        Self.fail(waiting)
    }

    private func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    // MARK: The thread

    private func run() {
        defer { replies.stop() }
        var backoff = Self.firstBackoff
        while !locked({ closed }) {
            guard let context = connect() else {
                sleep(backoff)
                backoff = min(backoff * 2, Self.maximumBackoff)
                continue
            }
            backoff = Self.firstBackoff
            locked {
                connected = !closed
                connections += 1
            }
            serve(context)
            redisFree(context)
            let waiting = locked { () -> [Request] in
                connected = false
                defer { queue = [] }
                return queue
            }
            Self.fail(waiting)
        }
    }

    /// Waits `duration` unless the store is closed meanwhile.
    private func sleep(_ duration: Duration) {
        let until = Date(timeIntervalSinceNow: Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
        condition.lock()
        while !closed, Date() < until { _ = condition.wait(until: until) }
        condition.unlock()
    }

    /// A connection made, authenticated, on its database and answering `PING`; `nil` on any failure.
    private func connect() -> UnsafeMutablePointer<redisContext>? {
        let host = endpoint.address.description
        guard let context = redisConnectWithTimeout(host, Int32(endpoint.port), Self.timeval(Self.timeout)) else {
            return nil
        }
        guard context.pointee.err == 0, redisSetTimeout(context, Self.timeval(Self.timeout)) == REDIS_OK else {
            redisFree(context)
            return nil
        }
        var setup: [[[UInt8]]] = []
        if let password { setup.append([Array("AUTH".utf8), password]) }
        if endpoint.database != 0 { setup.append([Array("SELECT".utf8), Array(String(endpoint.database).utf8)]) }
        setup.append([Array("PING".utf8)])
        for command in setup { guard Self.append(command, to: context) else { redisFree(context); return nil } }
        for _ in setup {
            guard let reply = Self.reply(from: context), reply.type != REDIS_REPLY_ERROR else {
                redisFree(context)
                return nil
            }
        }
        return context
    }

    /// Serves requests on `context` until it fails or the store closes.
    private func serve(_ context: UnsafeMutablePointer<redisContext>) {
        while true {
            condition.lock()
            while queue.isEmpty, !closed { condition.wait() }
            if closed {
                condition.unlock()
                return
            }
            let batch = queue
            queue = []
            condition.unlock()
            // A get that waited past the timeout in the queue is failed, not sent: its caller has
            // stopped waiting.
            let now = Self.now()
            var sent: [Request] = []
            for (position, request) in batch.enumerated() {
                if case .get(_, let enqueued, let arrived, let reply) = request, now - enqueued > Self.nanoseconds(Self.timeout) {
                    arrived()
                    reply(.failed)
                    continue
                }
                let command: [[UInt8]] = switch request {
                case .get(let key, _, _, _): [Array("GET".utf8), Array(key.utf8)]
                case .set(let key, let value, let seconds):
                    [Array("SET".utf8), Array(key.utf8), value, Array("EX".utf8), Array(String(seconds).utf8)]
                }
                guard Self.append(command, to: context) else {
                    Self.fail(sent + batch[position...])
                    return
                }
                sent.append(request)
            }
            // Every reply of the batch is read before any is handed out, and each lookup hears that its
            // reply is in first: handing them out (checking, answering the client) is this process's
            // work, which the lookups' patience does not count.
            var replies: [Reply] = []  // `self.replies` is the thread that hands them out
            replies.reserveCapacity(sent.count)
            for _ in sent {
                guard let reply = Self.reply(from: context) else { break }
                replies.append(reply)
            }
            var answers: [@Sendable () -> Void] = []
            for (request, reply) in zip(sent, replies) {
                guard case .get(_, _, let arrived, let answer) = request else { continue }
                arrived()
                let result: SharedCacheReply = switch reply.type {
                case REDIS_REPLY_STRING: .value(reply.bytes)
                case REDIS_REPLY_NIL: .absent
                default: .failed
                }
                answers.append { answer(result) }
            }
            self.replies.hand(answers)
            if replies.count < sent.count {
                Self.fail(Array(sent[replies.count...]))
                return
            }
        }
    }

    /// A thread that runs the store's reply callbacks in the order handed, until ``stop()``.
    private final class ReplyThread: @unchecked Sendable {
        // @unchecked: `pending` and `stopped` are read and written only while `condition` is locked.
        private let condition = NSCondition()
        private var pending: [@Sendable () -> Void] = []
        private var stopped = false

        init() {
            let thread = Thread { [self] in
                while true {
                    condition.lock()
                    while pending.isEmpty, !stopped { condition.wait() }
                    let due = pending
                    pending = []
                    let done = stopped
                    condition.unlock()
                    for answer in due { answer() }
                    if done { return }
                }
            }
            thread.name = "hostpin-redis-replies"
            thread.start()
        }

        /// Ends the thread once what was handed has run.
        func stop() {
            condition.lock()
            stopped = true
            condition.signal()
            condition.unlock()
        }

        func hand(_ answers: [@Sendable () -> Void]) {
            guard !answers.isEmpty else { return }
            condition.lock()
            pending += answers
            condition.signal()
            condition.unlock()
        }
    }

    /// A reply's type and, for a string, its bytes.
    private struct Reply {
        let type: Int32
        let bytes: [UInt8]
    }

    /// Reads the next reply; `nil` when the connection failed or timed out.
    private static func reply(from context: UnsafeMutablePointer<redisContext>) -> Reply? {
        var raw: UnsafeMutableRawPointer?
        guard redisGetReply(context, &raw) == REDIS_OK, let raw else { return nil }
        defer { freeReplyObject(raw) }
        let reply = raw.assumingMemoryBound(to: redisReply.self).pointee
        var bytes: [UInt8] = []
        if reply.type == REDIS_REPLY_STRING, let text = reply.str {
            bytes = text.withMemoryRebound(to: UInt8.self, capacity: reply.len) { Array(UnsafeBufferPointer(start: $0, count: reply.len)) }
        }
        return Reply(type: reply.type, bytes: bytes)
    }

    /// Appends `arguments` as one command to the context's output buffer (binary-safe: each argument with
    /// its length, `redisAppendCommandArgv`).
    private static func append(_ arguments: [[UInt8]], to context: UnsafeMutablePointer<redisContext>) -> Bool {
        let pointers = arguments.map { argument -> UnsafeMutablePointer<CChar> in
            let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: max(1, argument.count))
            argument.withUnsafeBytes { bytes in
                if let base = bytes.baseAddress { UnsafeMutableRawPointer(pointer).copyMemory(from: base, byteCount: bytes.count) }
            }
            return pointer
        }
        defer { for pointer in pointers { pointer.deallocate() } }
        var argv = pointers.map { UnsafePointer<CChar>?($0) }
        let lengths = arguments.map(\.count)
        return redisAppendCommandArgv(context, Int32(arguments.count), &argv, lengths) == REDIS_OK
    }

    private static func fail(_ requests: [Request]) {
        for case .get(_, _, let arrived, let reply) in requests {
            arrived()
            reply(.failed)
        }
    }

    private static func timeval(_ duration: Duration) -> timeval {
        let microseconds = nanoseconds(duration) / 1000
        return Glibc.timeval(tv_sec: Int(microseconds / 1_000_000), tv_usec: Int(microseconds % 1_000_000))
    }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        UInt64(duration.components.seconds) * 1_000_000_000 + UInt64(duration.components.attoseconds / 1_000_000_000)
    }

    private static func now() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
