import Dispatch
import HostPinNet
import Synchronization

/// An origin connection a client connection keeps open between its requests (persistent connections,
/// RFC 9112 §9.3), so a keep-alive client costs one origin connection, not one per request.
///
/// Reuse is per client connection, never shared between clients: each request of a connection may take
/// its one kept origin back only when it goes to the same pinned address with the same `Host` (the
/// ``Key``); anything else closes it. Sharing between client connections would save connects only for
/// clients that open a connection per request, and would let one client's requests ride a connection
/// another client's traffic shaped (its `Host`, its timing); a per-connection keep has no such
/// questions and no locking between clients. It is closed by the connection when the client leaves,
/// and by ``OriginKeeper``'s sweep once it has been idle for ``ForwardProxy/Configuration/originKeepAlive``.
final class KeptOrigin: Sendable {
    /// What a request must match to reuse the connection: the pinned address it is connected to and the
    /// `Host` it was opened for (the authority as the client wrote it).
    struct Key: Hashable, Sendable {
        let address: SocketAddress
        let host: String
    }

    private enum State {
        case busy
        /// Busy when the network changed: closed when its request is done instead of kept.
        case retiring
        case idle(since: ContinuousClock.Instant)
        case closed
    }

    let key: Key
    /// The authority the connection was opened for, as parsed (its text is the key's `host`): what a
    /// ``KeepAliveRelay`` compares the next request's target with.
    let authority: RequestTarget.Authority
    let channel: SocketChannel
    /// The ``OriginKeeper/generation`` when the connection was made: one made before a network change is
    /// never kept after it.
    let generation: UInt64
    /// The origin's side, buffered; empty whenever the connection is idle (a response with bytes after
    /// its end is never kept).
    let input: BufferedInput
    /// Guards whether a request uses the connection, it waits idle (since when), or it is closed; the
    /// sweep and the owning connection's task race for an idle one.
    private let state = Mutex(State.busy)

    init(address: SocketAddress, authority: RequestTarget.Authority, channel: SocketChannel, generation: UInt64 = 0) {
        key = Key(address: address, host: authority.text)
        self.authority = authority
        self.channel = channel
        self.generation = generation
        input = BufferedInput(channel: channel)
    }

    /// Marks the connection idle from now (after a response that allows reuse).
    func park() {
        let now = ContinuousClock.now
        let retired = state.withLock { state -> Bool in
            switch state {
            case .busy:
                state = .idle(since: now)
                return false
            case .retiring:
                state = .closed
                return true
            case .idle, .closed:
                return false
            }
        }
        if retired { channel.close() }
    }

    /// Closes the connection now when idle, or when its request is done when busy (a network change: it
    /// was made on the old path). Returns whether it was closed now.
    func retire() -> Bool {
        let closeNow = state.withLock { state -> Bool in
            switch state {
            case .idle:
                state = .closed
                return true
            case .busy:
                state = .retiring
                return false
            case .retiring, .closed:
                return false
            }
        }
        if closeNow { channel.close() }
        return closeNow
    }

    /// Takes an idle connection for a request: `false` when it is closed (swept) or has already seen the
    /// origin's FIN, a reset or unexpected bytes (then it is closed).
    ///
    /// - Parameter retryable: The request can be sent again on a fresh connection if this one turns out
    ///   dead: then the loop's edges decide without a system call (``SocketChannel/isQuiet(trustingEdges:)``),
    ///   else a non-blocking peek does.
    func claim(retryable: Bool) -> Bool {
        let claimed = state.withLock { state -> Bool in
            guard case .idle = state else { return false }
            state = .busy
            return true
        }
        guard claimed else { return false }
        if channel.isQuiet(trustingEdges: retryable) { return true }
        close()
        return false
    }

    /// Closes the connection if it has been idle since before `cutoff`; returns whether it is closed.
    func closeIfIdle(since cutoff: ContinuousClock.Instant) -> Bool {
        let expired = state.withLock { state -> Bool in
            switch state {
            case .closed: return true
            case .busy, .retiring: return false
            case .idle(let since):
                guard since < cutoff else { return false }
                state = .closed
                return true
            }
        }
        if expired { channel.close() }
        return expired
    }

    /// Closes the connection (no read or write may be running on it). Idempotent.
    func close() {
        state.withLock { $0 = .closed }
        channel.close()
    }
}

/// Closes kept origin connections idle for longer than a timeout: one timer per proxy, ticking once a
/// second, rather than a timer per request. Connections register when they are first kept and leave
/// the list once closed.
final class OriginKeeper: Sendable {
    private struct Kept {
        var origins: [ObjectIdentifier: KeptOrigin] = [:]
        var timer: (any DispatchSourceTimer)?
        /// Network changes so far (``retireAll()``).
        var generation: UInt64 = 0
    }

    /// How long an origin connection may stay idle.
    let timeout: Duration
    /// Guards the registered connections and the sweep timer.
    private let kept = Mutex(Kept())

    init(timeout: Duration) {
        self.timeout = timeout
    }

    /// Starts sweeping; called once, by ``ForwardProxy/start()``.
    func start() {
        let tick = Duration.seconds(1) < timeout ? Duration.seconds(1) : timeout
        let (seconds, attoseconds) = tick.components
        let interval = DispatchTimeInterval.nanoseconds(Int(seconds * 1_000_000_000 + attoseconds / 1_000_000_000))
        let handler: @Sendable () -> Void = { [weak self] in self?.sweep() }
        kept.withLock { kept in
            kept.timer?.cancel()
            let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "hostpin.proxy.origin-keeper"))
            timer.schedule(deadline: .now() + interval, repeating: interval)
            timer.setEventHandler(handler: handler)
            timer.resume()
            kept.timer = timer
        }
    }

    /// Stops sweeping and closes every idle connection; busy ones are closed by their connections.
    func stop() {
        let origins = kept.withLock { kept -> [KeptOrigin] in
            kept.timer?.cancel()
            kept.timer = nil
            defer { kept.origins = [:] }
            return Array(kept.origins.values)
        }
        let now = ContinuousClock.now
        for origin in origins { _ = origin.closeIfIdle(since: now + .seconds(1)) }
    }

    /// The network changes so far: a connection made now carries it (``KeptOrigin/generation``).
    var generation: UInt64 { kept.withLock { $0.generation } }

    /// Watches `origin` until it is closed; closes it instead when it was made before the last network
    /// change (it was busy with its first request then, so ``retireAll()`` did not see it).
    func register(_ origin: KeptOrigin) {
        let stale = kept.withLock { kept -> Bool in
            guard origin.generation == kept.generation else { return true }
            kept.origins[ObjectIdentifier(origin)] = origin
            return false
        }
        if stale { origin.close() }
    }

    /// Forgets `origin` (its connection closed it).
    func unregister(_ origin: KeptOrigin) {
        _ = kept.withLock { $0.origins.removeValue(forKey: ObjectIdentifier(origin)) }
    }

    /// Closes every idle connection now and every busy one once its request is done (a network change).
    ///
    /// - Returns: How many were closed now.
    func retireAll() -> Int {
        let origins = kept.withLock { kept in
            kept.generation += 1
            return Array(kept.origins.values)
        }
        var closed = 0
        for origin in origins where origin.retire() {
            unregister(origin)
            closed += 1
        }
        return closed
    }

    private func sweep() {
        let origins = kept.withLock { Array($0.origins.values) }
        let cutoff = ContinuousClock.now - timeout
        for origin in origins where origin.closeIfIdle(since: cutoff) {
            unregister(origin)
        }
    }
}
