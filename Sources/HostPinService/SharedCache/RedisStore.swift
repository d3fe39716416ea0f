import CHiredis
import Foundation
import HostPin

/// The shared cache's store in Redis, through hiredis 0.14's synchronous API on one thread of its own —
/// never the cooperative pool nor Dispatch's global queues (docs/ARCHITECTURE.md, "Shared cache").
///
/// Requests wait in a bounded queue (``queueLimit``); the thread takes every request waiting, pipelines
/// them (`GET key`, `SET key value EX seconds`), writes them and reads their replies within one
/// ``timeout`` (100 ms) each way, a reply at most ``replyLimit`` bytes; a second thread hands the replies
/// out, in order. A timeout, an oversized reply or an error closes the connection and fails what was
/// sent and what waits; while disconnected a `get` fails at once on the caller's thread and a `set` is
/// dropped, and the thread reconnects in the background with backoff (``firstBackoff`` doubling up to
/// ``maximumBackoff``), sending `AUTH` (the password file's) and `SELECT` (the URL's database) first,
/// then `PING`. So a Redis that is down or hung costs a lookup at most the caller's own patience.
public final class RedisStore: SharedCacheStore, @unchecked Sendable {
    // @unchecked: every stored `var` below is read and written only while `condition` is locked; the
    // hiredis context lives on the thread's stack alone.

    /// A connection's connect timeout, and how long a batch's commands may take to be written and, then,
    /// its replies to be read (a deadline for the whole batch, not for each `read(2)`: hiredis's own
    /// timeout counts each read, so a Redis sending a byte every 20 ms would hold the thread for ever).
    public static let timeout: Duration = .milliseconds(100)
    /// The largest reply read, in bytes (256 KiB; a cached resolution is a few hundred): a larger one
    /// closes the connection once that much of it has arrived, so no value is read whole into memory.
    public static let replyLimit = 256 * 1024
    /// The most requests waiting; more fail (a `get`) or are dropped (a `set`).
    public static let queueLimit = 4096
    /// The first wait before reconnecting.
    public static let firstBackoff: Duration = .milliseconds(100)
    /// The longest wait between reconnections.
    public static let maximumBackoff: Duration = .seconds(2)
    /// How often an idle connection is checked for having been closed by Redis (a restart, a kill), in
    /// seconds: found then, not by the next lookup — whose `SET`s would be dropped while it reconnects.
    static let idleCheck: TimeInterval = 1

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
        guard Self.flush(context, by: Self.deadline()) else { redisFree(context); return nil }
        let deadline = Self.deadline()
        for _ in setup {
            guard let reply = Self.reply(from: context, by: deadline), reply.type != REDIS_REPLY_ERROR else {
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
            while queue.isEmpty, !closed {
                guard !condition.wait(until: Date(timeIntervalSinceNow: Self.idleCheck)), queue.isEmpty, !closed else { continue }
                condition.unlock()
                let open = Self.isOpen(context)
                condition.lock()
                guard open else {
                    condition.unlock()
                    return
                }
            }
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
            if Self.flush(context, by: Self.deadline()) {
                let deadline = Self.deadline()
                for _ in sent {
                    guard let reply = Self.reply(from: context, by: deadline) else { break }
                    replies.append(reply)
                }
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

    /// Reads the next reply by `deadline` (a ``now()`` value); `nil` when the connection failed, the
    /// deadline passed or the reply grew past ``replyLimit``. This is `redisGetReply`'s loop by hand —
    /// parse what is buffered, else wait for input with `poll(2)` until the deadline and read once — so
    /// that the deadline and the bound hold for the whole reply.
    private static func reply(from context: UnsafeMutablePointer<redisContext>, by deadline: UInt64) -> Reply? {
        while true {
            var raw: UnsafeMutableRawPointer?
            guard redisGetReplyFromReader(context, &raw) == REDIS_OK else { return nil }
            if let raw {
                defer { freeReplyObject(raw) }
                let reply = raw.assumingMemoryBound(to: redisReply.self).pointee
                var bytes: [UInt8] = []
                if reply.type == REDIS_REPLY_STRING, let text = reply.str {
                    bytes = text.withMemoryRebound(to: UInt8.self, capacity: reply.len) { Array(UnsafeBufferPointer(start: $0, count: reply.len)) }
                }
                return Reply(type: reply.type, bytes: bytes)
            }
            // The reader holds only the reply being read (input is read only when no whole reply is
            // buffered), plus at most one read's worth of the next.
            let reader = context.pointee.reader.pointee
            guard reader.len - reader.pos <= replyLimit,
                  wait(for: Int16(POLLIN), on: context, by: deadline),
                  redisBufferRead(context) == REDIS_OK else { return nil }
        }
    }

    /// Writes the context's output buffer by `deadline`; `false` when the connection failed or the
    /// deadline passed (`redisGetReply` would write it first, each write bounded only by itself).
    private static func flush(_ context: UnsafeMutablePointer<redisContext>, by deadline: UInt64) -> Bool {
        var done: Int32 = 0
        while done == 0 {
            guard wait(for: Int16(POLLOUT), on: context, by: deadline),
                  redisBufferWrite(context, &done) == REDIS_OK else { return false }
        }
        return true
    }

    /// Whether an idle connection is still open: Redis sends nothing unasked, so input (end of file, an
    /// error, anything) means it is closed or not speaking the protocol.
    private static func isOpen(_ context: UnsafeMutablePointer<redisContext>) -> Bool {
        var descriptor = pollfd(fd: context.pointee.fd, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) == 0
    }

    /// Waits until the context's socket is ready for `events` or `deadline` passes; `true` when ready.
    private static func wait(for events: Int16, on context: UnsafeMutablePointer<redisContext>, by deadline: UInt64) -> Bool {
        while true {
            let current = now()
            guard current < deadline else { return false }
            var descriptor = pollfd(fd: context.pointee.fd, events: events, revents: 0)
            let milliseconds = Int32(min((deadline - current + 999_999) / 1_000_000, 1000))
            let ready = poll(&descriptor, 1, milliseconds)
            if ready > 0 { return true }
            if ready < 0, errno != EINTR { return false }
        }
    }

    /// The deadline ``timeout`` from now.
    private static func deadline() -> UInt64 { now() + nanoseconds(timeout) }

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
