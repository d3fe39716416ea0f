import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Writes log lines to a file descriptor from a thread of its own, so that whoever logs (a proxy
/// connection's task, on Swift's cooperative pool) never waits for the log's reader.
///
/// ``append(_:)`` only queues the line, under a lock, and returns. The writer thread takes everything
/// queued at once and writes it with blocking `write(2)` calls, then lets lines gather for 5 ms. The queue holds at most `capacity` bytes
/// of lines (the writer holds one more batch while it writes): a line that does not fit is dropped and
/// counted, and the count takes the dropped lines' place in the output as one line,
/// `hostpin: N access-log lines dropped (the output was not read fast enough)`.
///
/// ```swift
/// let log = AccessLogWriter(descriptor: STDOUT_FILENO)
/// configuration.accessLog = { log.append($0.description) }
/// …
/// _ = await log.finish(within: .seconds(2))
/// ```
///
/// The thread runs until ``finish(within:)``.
public final class AccessLogWriter: Sendable {
    private enum Item {
        case line(String)
        /// An access-log entry, formatted into its line by the writer thread.
        case entry(AccessLogEntry)
        /// Lines dropped, one after another, at this place in the output.
        case dropped(Int)
    }

    private struct State {
        var queue: [Item] = []
        /// Bytes of the lines in `queue`.
        var bytes = 0
        /// The writer found the queue empty and waits on `wake`: the next append signals it.
        var writerAsleep = false
        /// ``finish(within:)`` was called: later lines are ignored, the writer ends once the queue is empty.
        var finishing = false
        /// The writer has written everything and ended.
        var ended = false
    }

    /// The descriptor written to (not closed by the writer).
    public let descriptor: Int32
    /// The most bytes of lines the queue holds.
    public let capacity: Int
    /// Guards the queue, its size, and the writer's and the caller's flags.
    private let state = Mutex(State())
    /// Signalled once per sleep of the writer, by the append or finish that finds it asleep.
    private let wake = DispatchSemaphore(value: 0)
    /// Signalled when the writer ends.
    private let ended = DispatchSemaphore(value: 0)

    /// Starts the writer thread.
    ///
    /// - Parameters:
    ///   - descriptor: Where lines go, e.g. `STDOUT_FILENO`; blocking or not.
    ///   - capacity: The most bytes of lines queued, newlines included. Default: 1 MiB (about 10,000
    ///     access-log lines).
    public init(descriptor: Int32, capacity: Int = 1 << 20) {
        self.descriptor = descriptor
        self.capacity = capacity
        let thread = Thread { [self] in run() }
        thread.name = "hostpin.access-log"
        thread.start()
    }

    /// Queues `line` (a newline is added), or drops and counts it when the queue is full. Never blocks
    /// on the descriptor; safe from any thread or task.
    public func append(_ line: String) {
        queue(.line(line), size: line.utf8.count + 1)
    }

    /// Queues `entry`'s line (``AccessLogEntry/description``), as ``append(_:)-(String)`` does. The line
    /// is formatted by the writer thread, not the caller's (formatting took 4 % of a busy proxy's event
    /// loop); the queue counts it at ``AccessLogEntry/maximumLineLength``.
    public func append(_ entry: AccessLogEntry) {
        queue(.entry(entry), size: entry.maximumLineLength + 1)
    }

    private func queue(_ item: Item, size: Int) {
        let signal = state.withLock { state -> Bool in
            guard !state.finishing else { return false }
            if state.bytes + size > capacity {
                if case .dropped(let count) = state.queue.last {
                    state.queue[state.queue.count - 1] = .dropped(count + 1)
                } else {
                    state.queue.append(.dropped(1))
                }
            } else {
                state.queue.append(item)
                state.bytes += size
            }
            return Self.takeSleepingWriter(&state)
        }
        if signal { wake.signal() }
    }

    /// Stops taking lines and waits, at most `limit`, for the writer to write what is queued and end.
    /// The wait is on a thread of its own, not the caller's.
    ///
    /// - Returns: Whether everything queued was written within `limit` (`false` when the reader is too
    ///   slow, or gone and the descriptor blocks).
    public func finish(within limit: Duration) async -> Bool {
        let (signal, done) = state.withLock { state -> (Bool, Bool) in
            state.finishing = true
            return (Self.takeSleepingWriter(&state), state.ended)
        }
        if signal { wake.signal() }
        if done { return true }
        let (seconds, attoseconds) = limit.components
        let nanoseconds = Int(clamping: seconds) &* 1_000_000_000 &+ Int(attoseconds / 1_000_000_000)
        let ended = ended
        return await withCheckedContinuation { continuation in
            Thread {
                let result = ended.wait(timeout: .now() + .nanoseconds(max(0, nanoseconds)))
                if result == .success { ended.signal() }  // for a later call
                continuation.resume(returning: result == .success)
            }.start()
        }
    }

    /// The writer thread: takes the queue whole, writes it, sleeps while it is empty.
    private func run() {
        var text: [UInt8] = []
        while true {
            let (batch, finished) = state.withLock { state -> ([Item], Bool) in
                if state.queue.isEmpty {
                    if state.finishing {
                        state.ended = true
                        return ([], true)
                    }
                    state.writerAsleep = true
                    return ([], false)
                }
                defer {
                    state.queue = []
                    state.bytes = 0
                }
                return (state.queue, false)
            }
            if finished {
                ended.signal()
                return
            }
            if batch.isEmpty {
                wake.wait()
                continue
            }
            // One buffer for every batch, each line formatted straight into it (no string per line).
            text.removeAll(keepingCapacity: true)
            for item in batch {
                switch item {
                case .line(let line): text.append(contentsOf: line.utf8)
                case .entry(let entry): entry.appendLine(to: &text)
                case .dropped(let count):
                    text.append(contentsOf: "hostpin: \(count) access-log lines dropped (the output was not read fast enough)".utf8)
                }
                text.append(UInt8(ascii: "\n"))
            }
            writeAll(text)
            // Lines that come while this thread sleeps gather for the next batch: under load the writer
            // wakes and writes at most ~200 times a second, not once per request (the signal that wakes
            // it cost a busy proxy a thread switch per request); a lone line still goes out at once.
            if !state.withLock({ $0.finishing }) { usleep(Self.gatheringMicroseconds) }
        }
    }

    /// How long the writer lets lines gather after writing a batch.
    private static let gatheringMicroseconds: UInt32 = 5000

    /// Writes `bytes` whole, waiting in `poll` if the descriptor is non-blocking and full. A failure
    /// other than `EINTR`/`EAGAIN` (the reader closed the pipe, the disk is full) loses this batch.
    private func writeAll(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written >= 0 {
                offset += written
                continue
            }
            switch errno {
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                _ = poll(&ready, 1, -1)
            default:
                return
            }
        }
    }

    /// Whether the writer sleeps and must be signalled (the caller signals after the lock).
    private static func takeSleepingWriter(_ state: inout State) -> Bool {
        defer { state.writerAsleep = false }
        return state.writerAsleep
    }
}
