import HostPinNet
import Synchronization

/// The client connections a running ``ForwardProxy`` serves: how many (for
/// ``ForwardProxy/Configuration/maximumConnections``), and which are idle and which are serving a request
/// (for a graceful stop: idle ones are closed at once, busy ones get the grace period).
///
/// A connection is *busy* from the first byte of a request head to the end of its response or tunnel,
/// and *idle* otherwise (accepted but silent, or kept alive between requests). At a stop, an idle
/// connection whose socket holds unread bytes (a request that arrived before its task read it) is left
/// to become busy; the others are marked closing and shut down. The idle→busy step checks that mark
/// under the same lock, so a connection is either closed as idle or allowed to finish its request,
/// never both and never neither.
final class ConnectionRegistry: Sendable {
    /// What ``admit(_:)`` decided.
    enum Admission {
        case admitted(ConnectionSlot)
        /// Over the maximum: answer 503 and close. `firstOfEpisode` is true for the first refusal since
        /// the last admission (so the problem is reported once per episode).
        case full(firstOfEpisode: Bool)
        /// The proxy is stopping: close at once.
        case stopping
    }

    private struct Entry {
        let channel: SocketChannel
        /// Ends whatever serves the connection now when the grace period is over: cancels its task, or
        /// shuts the sockets of its ``KeepAliveRelay``.
        var cut: (@Sendable () -> Void)?
        var busy = false
        /// Shut down by the stop as idle: it must not begin a request.
        var closing = false
    }

    private struct State {
        var entries: [UInt64: Entry] = [:]
        var nextID: UInt64 = 0
        var stopping = false
        /// The grace period is over (``cutAll()``): what attaches now is cut at once.
        var cutting = false
        /// Refusing connections since the last admission.
        var full = false
        /// Tasks waiting for the last connection to end.
        var emptyWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// The most connections served at once.
    let maximum: Int
    /// Guards the connections, their tasks and idle/busy marks, the stopping flag and the waiters for
    /// the last connection to end.
    private let state = Mutex(State())

    init(maximum: Int) {
        self.maximum = maximum
    }

    /// Counts `channel` in if there is room and the proxy is not stopping.
    func admit(_ channel: SocketChannel) -> Admission {
        state.withLock { state in
            if state.stopping { return .stopping }
            guard state.entries.count < maximum else {
                defer { state.full = true }
                return .full(firstOfEpisode: !state.full)
            }
            state.full = false
            let id = state.nextID
            state.nextID += 1
            state.entries[id] = Entry(channel: channel)
            return .admitted(ConnectionSlot(id: id, registry: self))
        }
    }

    /// Records the task serving connection `id` (``attach(cut:to:)`` with its cancellation).
    func attach(_ task: Task<Void, Never>, to id: UInt64) {
        attach(cut: { task.cancel() }, to: id)
    }

    /// Records how to end what serves connection `id` now (called if the grace period ends first, at
    /// once if it has ended), replacing what was recorded: a connection passes between its task and its
    /// ``KeepAliveRelay``, each attaching before it runs. A connection that already ended (and removed
    /// its entry) records nothing.
    func attach(cut: @escaping @Sendable () -> Void, to id: UInt64) {
        let now = state.withLock { state -> Bool in
            state.entries[id]?.cut = cut
            return state.cutting && state.entries[id] != nil
        }
        if now { cut() }
    }

    /// Connection `id` has ended: its slot is free.
    func remove(_ id: UInt64) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.entries[id] = nil
            guard state.entries.isEmpty else { return [] }
            defer { state.emptyWaiters = [] }
            return state.emptyWaiters
        }
        waiters.forEach { $0.resume() }
    }

    /// Marks connection `id` busy; `false` when the stop closed it as idle (the connection ends instead).
    func beginRequest(_ id: UInt64) -> Bool {
        state.withLock { state in
            guard state.entries[id]?.closing == false else { return false }
            state.entries[id]?.busy = true
            return true
        }
    }

    /// Marks connection `id` idle; `false` when the proxy is stopping (the connection closes instead of
    /// waiting for another request).
    func endRequest(_ id: UInt64) -> Bool {
        state.withLock { state in
            state.entries[id]?.busy = false
            return !state.stopping
        }
    }

    /// Whether the proxy is stopping (responses then say `Connection: close`).
    var isStopping: Bool {
        state.withLock { $0.stopping }
    }

    /// Admits no more connections and shuts the idle ones down; busy ones finish their request, and so
    /// do idle ones with a request already waiting in their socket.
    func beginStopping() {
        let idle = state.withLock { state -> [(UInt64, SocketChannel)] in
            state.stopping = true
            return state.entries.filter { !$0.value.busy }.map { ($0.key, $0.value.channel) }
        }
        let quiet = idle.filter { $0.1.isQuiet() }  // a peek, outside the lock
        let closing = state.withLock { state -> [SocketChannel] in
            quiet.compactMap { id, channel in
                guard state.entries[id]?.busy == false else { return nil }  // began a request meanwhile
                state.entries[id]?.closing = true
                return channel
            }
        }
        closing.forEach { $0.shutdown() }
    }

    /// Shuts every remaining connection down and ends what serves it (the grace period is over).
    func cutAll() {
        let remaining = state.withLock { state in
            state.stopping = true
            state.cutting = true
            return Array(state.entries.values)
        }
        for entry in remaining {
            entry.channel.shutdown()
            entry.cut?()
        }
    }

    /// Returns once no connection is left (at once if none is).
    func waitUntilEmpty() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let empty = state.withLock { state -> Bool in
                guard !state.entries.isEmpty else { return true }
                state.emptyWaiters.append(continuation)
                return false
            }
            if empty { continuation.resume() }
        }
    }
}

/// One admitted connection's place in the ``ConnectionRegistry``, handed to its ``ProxyConnection``.
struct ConnectionSlot: Sendable {
    let id: UInt64
    let registry: ConnectionRegistry

    /// See ``ConnectionRegistry/beginRequest(_:)``.
    func beginRequest() -> Bool { registry.beginRequest(id) }
    /// See ``ConnectionRegistry/endRequest(_:)``.
    func endRequest() -> Bool { registry.endRequest(id) }
    /// See ``ConnectionRegistry/isStopping``.
    var isStopping: Bool { registry.isStopping }
}
