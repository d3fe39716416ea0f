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
    private let inbox: Inbox

    /// Creates the channel and starts the thread that owns it from then on.
    ///
    /// The channel is created here, on the caller's thread: `ares_init_options` does no network I/O, so
    /// a failure is reported at once and nobody waits for the owner thread to start.
    ///
    /// - Parameters:
    ///   - server: The only server this channel queries, a plain DNS server's address and port; `nil` for
    ///     the system's configured servers (used only for the untrusted, compare-only side).
    ///   - timeout: c-ares's first per-try timeout; it doubles on each retry.
    ///   - tries: Attempts per query.
    ///   - useTCP: Send every query over TCP.
    /// - Throws: ``ResolutionError/setupFailed(_:)`` when c-ares cannot create the channel.
    init(server: (address: IPAddress, port: UInt16)?, timeout: Duration, tries: Int, useTCP: Bool) throws(ResolutionError) {
        AresLibrary.initialiseOnce()
        // `IP:PORT`, IPv6 in brackets: the form ares_set_servers_ports_csv takes.
        let serverList = server.map { "\($0.address.uriHost):\($0.port)" }
        let settings = AresEventLoop.Settings(serverList: serverList, timeoutMilliseconds: timeout.milliseconds,
                                              tries: tries, useTCP: useTCP)
        let loop = try AresEventLoop(settings)
        let wakeFD = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard wakeFD >= 0 else {
            loop.close()
            throw .setupFailed("eventfd: \(String(cString: strerror(errno)))")
        }
        let inbox = Inbox(wakeFD: wakeFD, owner: ObjectIdentifier(loop.round))
        self.inbox = inbox
        // The loop is not Sendable: the Mutex hands it over once, and from then on only the owner thread
        // touches it (the thread start orders the creation above before every use there).
        let handover = Mutex<AresEventLoop?>(loop)
        let thread = Thread {
            guard let loop = handover.withLock({ $0.take() }) else { return }
            loop.run(inbox)
        }
        thread.name = "hostpin-ares \(serverList ?? "system")"
        thread.start()
    }

    deinit {
        inbox.stop()
    }

    /// Sends each of `queries` with `ares_send` on this channel: c-ares does the tries, the per-try
    /// timeouts, TCP after a truncated UDP reply (RFC 7766 §5), and takes the reply whose ID and question
    /// match.
    ///
    /// Cancelling the calling task, or `deadline` running out, returns at once (every outcome
    /// `.cancelled`) and leaves every other query on the channel running.
    func exchange(_ queries: [[UInt8]], deadline: ResolutionDeadline?) async -> [ExchangeOutcome] {
        await PendingExchange.perform(queries, deadline: deadline) { inbox.submit($0) }
    }

    /// Sends `queries` as ``exchange(_:deadline:)`` does; `completion` runs on the channel's owner thread
    /// when the last reply is in (on the budget timer's when `deadline` runs out first): no task, no
    /// continuation.
    func start(_ queries: [[UInt8]], deadline: ResolutionDeadline?,
               completion: @escaping @Sendable ([ExchangeOutcome]) -> Void) {
        PendingExchange.start(queries, deadline: deadline, submit: { inbox.submit($0) }, completion: completion)
    }

    /// Sends every query of `block` with `ares_send` on this channel, as ``exchange(_:deadline:)`` sends
    /// one exchange's: one hand-over and at most one wake-up for the whole block. Each outcome reaches the
    /// block's handler on the owner thread. No deadline: c-ares's tries and per-try timeouts end each query.
    func submit(_ block: AresQueryBlock) {
        inbox.submit(block)
    }
}

/// Work handed to the owner thread, and the eventfd that wakes it.
///
/// The lock is held only to append to the queue or swap it: no system call inside it, and the owner
/// thread swaps in its own emptied batch, so an append seldom allocates. Submitters on the cooperative
/// pool and the owner thread then hardly ever spin on each other.
final class Inbox: Sendable {
    private struct State {
        var exchanges: [PendingExchange] = []
        var blocks: [AresQueryBlock] = []
        var stopping = false
    }

    private let state = Mutex(State())
    /// Written to wake the owner thread. Closed only when the inbox is freed, so a submitter may write it
    /// after unlocking.
    let wakeFD: Int32
    /// The owner thread's ``AresRound``: a submit made inside it (a callback starting the next query)
    /// needs no wake-up, since the round takes the queue until it is empty before the thread polls.
    private let owner: ObjectIdentifier

    init(wakeFD: Int32, owner: ObjectIdentifier) {
        self.wakeFD = wakeFD
        self.owner = owner
    }

    deinit {
        Glibc.close(wakeFD)
    }

    /// Queues `exchange` for the owner thread. Only a submit to an empty queue from another thread writes
    /// the eventfd: the owner takes the whole queue after every wake-up, so a burst of submits while it is
    /// busy costs one write. The eventfd counts, so a write the owner has not polled for yet is not lost.
    func submit(_ exchange: PendingExchange) {
        let (accepted, wake) = state.withLock { state -> (Bool, Bool) in
            guard !state.stopping else { return (false, false) }
            state.exchanges.append(exchange)
            return (true, state.exchanges.count == 1 && state.blocks.isEmpty)
        }
        guard accepted else { return exchange.cancel() }
        if wake, AresRound.current.map(ObjectIdentifier.init) != owner { Self.wake(wakeFD) }
    }

    /// Queues `block` for the owner thread, waking it as ``submit(_:)-(PendingExchange)`` does.
    func submit(_ block: AresQueryBlock) {
        let (accepted, wake) = state.withLock { state -> (Bool, Bool) in
            guard !state.stopping else { return (false, false) }
            state.blocks.append(block)
            return (true, state.blocks.count == 1 && state.exchanges.isEmpty)
        }
        guard accepted else { return block.cancel() }
        if wake, AresRound.current.map(ObjectIdentifier.init) != owner { Self.wake(wakeFD) }
    }

    func stop() {
        state.withLock { $0.stopping = true }
        Self.wake(wakeFD)
    }

    /// Swaps the queued exchanges into `batch` (emptied first, keeping its storage, which the queue takes
    /// over); `false` once the channel is stopping.
    func take(into batch: inout [PendingExchange], blocks: inout [AresQueryBlock]) -> Bool {
        batch.removeAll(keepingCapacity: true)
        blocks.removeAll(keepingCapacity: true)
        return state.withLock { state in
            if state.stopping { return false }
            swap(&batch, &state.exchanges)
            swap(&blocks, &state.blocks)
            return true
        }
    }

    /// Called by the owner thread on its way out: refuses every later submit and returns what is still
    /// queued, to fail.
    func drain() -> (exchanges: [PendingExchange], blocks: [AresQueryBlock]) {
        state.withLock { state in
            state.stopping = true
            defer {
                state.exchanges.removeAll()
                state.blocks.removeAll()
            }
            return (state.exchanges, state.blocks)
        }
    }

    private static func wake(_ fd: Int32) {
        var one: UInt64 = 1
        _ = write(fd, &one, MemoryLayout<UInt64>.size)
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
