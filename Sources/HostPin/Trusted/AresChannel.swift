import CAres
import Dispatch
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One c-ares channel and the thread that owns it: the transport of plain DNS over UDP and TCP.
///
/// c-ares 1.18 is not thread-safe and has no event thread, so every call on the channel happens on
/// one dedicated thread. That thread sleeps in `poll(2)` on the channel's sockets (reported through
/// `ARES_OPT_SOCK_STATE_CB`) and on an eventfd, with c-ares's own next timeout (`ares_timeout`) as the
/// bound; `ares_process_fd` does the I/O and runs callbacks. Other threads hand over work through
/// ``Inbox`` and write the eventfd to wake the owner. No timer polling.
final class AresChannel: UpstreamTransport {
    /// `nil`: the servers c-ares reads from the system configuration (used only for the untrusted,
    /// compare-only side).
    let server: Upstream?
    private let inbox: Inbox

    /// Starts the owner thread and creates the channel on it.
    ///
    /// - Parameters:
    ///   - server: The only server this channel queries; `nil` for the system's configured servers.
    ///   - timeout: c-ares's first per-try timeout; it doubles on each retry.
    ///   - tries: Attempts per query.
    ///   - useTCP: Send every query over TCP.
    /// - Throws: ``ResolutionError/setupFailed(_:)`` when c-ares cannot create the channel.
    init(server: Upstream?, timeout: Duration, tries: Int, useTCP: Bool) throws(ResolutionError) {
        AresLibrary.initialiseOnce()
        self.server = server
        let wakeFD = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard wakeFD >= 0 else { throw .setupFailed("eventfd: \(String(cString: strerror(errno)))") }
        let inbox = Inbox(wakeFD: wakeFD)
        self.inbox = inbox
        let started = Startup()
        let settings = AresEventLoop.Settings(server: server, timeoutMilliseconds: timeout.milliseconds,
                                              tries: tries, useTCP: useTCP)
        let thread = Thread {
            AresEventLoop.run(settings: settings, inbox: inbox, started: started)
        }
        thread.name = "hostpin-ares \(server?.description ?? "system")"
        thread.start()
        if let failure = started.wait() {
            throw .setupFailed(failure)
        }
    }

    deinit {
        inbox.stop()
    }

    /// Sends `query` with `ares_send` on this channel: c-ares does the tries, the per-try timeouts, TCP
    /// after a truncated UDP reply (RFC 7766 §5), and takes the reply whose ID and question match.
    ///
    /// Cancelling the calling task, or `deadline` running out, returns `.cancelled` at once and leaves
    /// every other query on the channel running.
    func exchange(_ query: [UInt8], deadline: ResolutionDeadline?) async -> ExchangeOutcome {
        await PendingExchange.perform(query, deadline: deadline) { inbox.submit($0) }
    }
}

/// Work handed to the owner thread, and the eventfd that wakes it.
final class Inbox: Sendable {
    private struct State {
        var exchanges: [PendingExchange] = []
        var stopping = false
        var wakeFD: Int32
    }

    // Guards the queue and the eventfd's lifetime: the owner thread closes the eventfd under this lock
    // after it has seen `stopping`, and nobody writes to it after that.
    private let state: Mutex<State>

    init(wakeFD: Int32) {
        state = Mutex(State(wakeFD: wakeFD))
    }

    var wakeFD: Int32 { state.withLock { $0.wakeFD } }

    /// Queues `exchange` for the owner thread. Only a submit to an empty queue writes the eventfd: the
    /// owner takes the whole queue after every wake-up, so a burst of submits while it is busy costs one
    /// write.
    func submit(_ exchange: PendingExchange) {
        let accepted = state.withLock { state in
            guard !state.stopping else { return false }
            if state.exchanges.isEmpty { Self.wake(state.wakeFD) }
            state.exchanges.append(exchange)
            return true
        }
        if !accepted { exchange.finish(.cancelled) }
    }

    func stop() {
        state.withLock { state in
            state.stopping = true
            Self.wake(state.wakeFD)
        }
    }

    /// Takes the queued exchanges; `nil` once the channel is stopping.
    func take() -> [PendingExchange]? {
        state.withLock { state in
            if state.stopping { return nil }
            defer { state.exchanges.removeAll(keepingCapacity: true) }
            return state.exchanges
        }
    }

    /// Called by the owner thread on its way out: fails what is still queued and closes the eventfd.
    func close() -> [PendingExchange] {
        state.withLock { state in
            Glibc.close(state.wakeFD)
            state.wakeFD = -1
            defer { state.exchanges.removeAll() }
            return state.exchanges
        }
    }

    private static func wake(_ fd: Int32) {
        var one: UInt64 = 1
        _ = write(fd, &one, MemoryLayout<UInt64>.size)
    }
}

/// The owner thread's start-up report: `nil` on success, else c-ares's message.
final class Startup: Sendable {
    private let result = Mutex<String??>(nil)
    private let done = DispatchSemaphore(value: 0)

    func report(_ failure: String?) {
        result.withLock { $0 = .some(failure) }
        done.signal()
    }

    func wait() -> String? {
        done.wait()
        return result.withLock { $0 ?? nil }
    }
}

enum AresLibrary {
    /// `ares_library_init` once per process, before the first channel.
    static func initialiseOnce() { _ = initialised }
    private static let initialised: Int32 = ares_library_init(HOSTPIN_ARES_LIB_INIT_ALL)
}

extension Duration {
    /// Whole milliseconds, at least 1, at most `Int32.max`.
    var milliseconds: Int32 {
        let (seconds, attoseconds) = components
        let millis = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return Int32(clamping: max(1, millis))
    }
}
