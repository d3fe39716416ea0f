import CEpoll
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A non-blocking socket registered once, edge-triggered, on an ``EventLoop``: reads and writes try the
/// system call first and suspend the calling task only on `EAGAIN`, until the loop reports an edge,
/// the deadline passes, the task is cancelled or the socket is shut down. No thread ever blocks on it.
///
/// **No lost wakeup, by construction.** Each direction keeps, under the channel's lock, `ready` and at
/// most one `waiter`. An edge (on the loop thread) either takes the waiter and resumes it, and the woken
/// task retries the system call, or, with no waiter, sets `ready`. A wait consumes `ready` only to retry
/// the system call instead of suspending. So an edge that arrives before the waiter is stored is seen by
/// that retry, and one that arrives after finds the waiter: every edge reaches a retry. (Linux
/// reports an edge for every new arrival of data or buffer space, so no level state is needed.)
///
/// **No needless system calls.** A read that found the socket empty (`EAGAIN`, or fewer bytes than asked
/// for: with `EPOLLRDHUP` registered, a short read has taken everything queued, as nginx assumes too)
/// marks the direction `drained`; the next read then waits for an edge first instead of trying a
/// `recv` that would fail with `EAGAIN` (a keep-alive connection's next request, an origin's response,
/// are almost never there yet when they are first read). Any byte that arrives after the draining read
/// brings an edge, so the wait cannot miss it; an edge recorded in `ready` lets the read go ahead at once.
/// Once the peer's FIN, a hang-up or an error has been reported (`EPOLLRDHUP`, `EPOLLHUP`, `EPOLLERR`)
/// there are no more edges to wait for, so from then on every read calls `recv` first.
///
/// Each direction has at most one waiter (a connection's reader and its writer): a suspended task, or a
/// ``ReadinessHandler`` called back from the loop (``notify(_:when:deadline:)``: the same flags, the
/// same lock, so the same invariant). ``shutdown()``
/// may be called from any task; ``close()`` by the owner once no read or write is running (it is also
/// called by `deinit`).
package final class SocketChannel: EventLoopHandler {
    /// The socket's file descriptor; closed by ``close()``.
    package let descriptor: Int32
    /// The remote endpoint as the channel was made with it: the address `accept(2)` returned, or the one
    /// connected to; `nil` for a listening or datagram socket. Never asked of the kernel later: once the
    /// peer has reset the connection, `getpeername(2)` fails (`ENOTCONN`), and the access log lost the client.
    package let peer: SocketAddress?

    /// Who waits: a suspended task, or a ``ReadinessHandler`` called back (``notify(_:when:deadline:)``).
    private enum Resumer {
        /// Unchecked (a checked one allocates a canary per wait): taken out of the state under the lock
        /// by whoever resumes it, so it is resumed exactly once.
        case task(UnsafeContinuation<Void, any Error>)
        case handler(any ReadinessHandler)
    }

    private struct Waiter {
        let id: UInt64
        let resumer: Resumer
        let deadline: ContinuousClock.Instant?

        /// The edge came: the task retries its system call, the handler is called back to.
        func resume() {
            switch resumer {
            case .task(let continuation): continuation.resume()
            case .handler(let handler): handler.readiness(.success(()))
            }
        }

        func resume(throwing error: SocketError) {
            switch resumer {
            case .task(let continuation): continuation.resume(throwing: error)
            case .handler(let handler): handler.readiness(.failure(error))
            }
        }
    }

    private struct Direction {
        /// An edge arrived while no task waited: the next wait retries the system call instead.
        var ready = false
        /// The last `recv` found nothing more queued and no edge has arrived since: the next read waits
        /// for an edge before calling `recv` (reads only).
        var drained = false
        var waiter: Waiter?
        /// The deadline of this direction's one live timer on the loop (later waiters' deadlines are
        /// scheduled again when it fires); `nil` when none is pending.
        var scheduled: ContinuousClock.Instant?
    }

    private struct State {
        var read = Direction()
        var write = Direction()
        var nextWaiterID: UInt64 = 0
        /// The loop reported the peer's FIN, a hang-up or an error: no edge follows, `drained` is ignored.
        var hungUp = false
        var shut = false
        var closed = false

        subscript(direction: IODirection) -> Direction {
            get { direction == .read ? read : write }
            set { if direction == .read { read = newValue } else { write = newValue } }
        }
    }

    /// What a wait decided under the lock.
    private enum Decision {
        case refuse(SocketError)
        case retry
        case suspend(schedule: ContinuousClock.Instant?)
    }

    private let loop: EventLoop
    private let token: UInt64
    /// Guards both directions (ready flags, waiters, scheduled timers) and the shut/closed flags.
    private let state = Mutex(State())

    /// Wraps `descriptor`, a socket (connected, connecting or listening), sets it non-blocking and
    /// registers it on `loop`.
    ///
    /// - Parameter peer: The remote endpoint (``peer``): what `accept(2)` returned, or the address
    ///   connected to; `nil` for a listening or datagram socket.
    /// - Throws: ``SocketError/system(call:errno:)`` when it cannot be registered; the descriptor is
    ///   closed then.
    package init(descriptor: Int32, peer: SocketAddress?, loop: EventLoop = .shared) throws(SocketError) {
        self.descriptor = descriptor
        let flags = fcntl(descriptor, F_GETFL)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
        var one: Int32 = 1
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        self.peer = peer
        self.loop = loop
        token = loop.newToken()
        try loop.add(descriptor, token: token, handler: self)  // on failure `deinit` closes the descriptor
    }

    deinit {
        close()
    }

    /// Reads up to `maximum` bytes, waiting until some arrive.
    ///
    /// - Parameter deadline: When to give up waiting; `nil` waits for ever.
    /// - Returns: The bytes read; empty at end of stream (the peer shut down its side).
    /// - Throws: ``SocketError``.
    package func read(maximum: Int = 65_536, deadline: ContinuousClock.Instant?) async throws(SocketError) -> [UInt8] {
        while true {
            let waitFirst = try state.withLock { state throws(SocketError) -> Bool in
                if state.shut { throw .closed }
                if state.read.drained && !state.read.ready && !state.hungUp { return true }
                // The recv below sees every edge recorded so far.
                state.read.ready = false
                state.read.drained = false
                return false
            }
            if waitFirst {
                // Returns at once when an edge came in meanwhile; the recv after it sees that edge's bytes.
                try await wait(.read, deadline: deadline)
            }
            var count = 0
            var failure: Int32 = 0
            let bytes = [UInt8](unsafeUninitializedCapacity: maximum) { buffer, initialized in
                count = recv(descriptor, buffer.baseAddress, maximum, 0)
                failure = errno
                initialized = max(0, count)
            }
            let drained = (count > 0 && count < maximum) || (count < 0 && (failure == EAGAIN || failure == EWOULDBLOCK))
            if drained { state.withLock { $0.read.drained = true } }
            if count >= 0 { return bytes }
            switch failure {
            case EINTR, EAGAIN, EWOULDBLOCK: continue
            default: throw .system(call: "recv", errno: failure)
            }
        }
    }

    /// Writes all of `bytes`, waiting while the kernel's send buffer is full.
    ///
    /// - Parameter deadline: When to give up waiting for buffer space; `nil` waits for ever.
    /// - Throws: ``SocketError``; a peer that reset the connection gives `.system(call: "send", …)`.
    package func write(_ bytes: some Collection<UInt8>, deadline: ContinuousClock.Instant?) async throws(SocketError) {
        let array = Array(bytes)
        var offset = 0
        while offset < array.count {
            if state.withLock({ $0.shut }) { throw .closed }
            let sent = array.withUnsafeBytes { raw in
                send(descriptor, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            let failure = errno
            if sent >= 0 {
                offset += sent
                continue
            }
            switch failure {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: try await wait(.write, deadline: deadline)
            default: throw .system(call: "send", errno: failure)
            }
        }
    }

    /// What one non-suspending ``receive(into:)`` or ``transmit(_:)`` did.
    package enum Transfer: Equatable, Sendable {
        /// This many bytes (more than zero) were moved.
        case moved(Int)
        /// The peer shut its side down (receive only).
        case end
        /// Nothing can move now: ask ``notify(_:when:deadline:)`` for the next edge.
        case wouldBlock
        case failed(SocketError)
    }

    /// Reads what is queued into `buffer` without waiting: the read of ``read(maximum:deadline:)``, with
    /// its rules (a drained socket is not asked again before an edge), for a caller driven by
    /// ``ReadinessHandler`` callbacks instead of a task.
    package func receive(into buffer: UnsafeMutableRawBufferPointer) -> Transfer {
        let skip = state.withLock { state -> Bool? in
            if state.shut { return nil }
            if state.read.drained && !state.read.ready && !state.hungUp { return true }
            state.read.ready = false
            state.read.drained = false
            return false
        }
        guard let skip else { return .failed(.closed) }
        if skip { return .wouldBlock }
        while true {
            let count = recv(descriptor, buffer.baseAddress, buffer.count, 0)
            let failure = errno
            if (count > 0 && count < buffer.count) || (count < 0 && (failure == EAGAIN || failure == EWOULDBLOCK)) {
                state.withLock { $0.read.drained = true }
            }
            if count > 0 { return .moved(count) }
            if count == 0 { return .end }
            switch failure {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: return .failed(.system(call: "recv", errno: failure))
            }
        }
    }

    /// Sends what the kernel's buffer takes of `bytes` without waiting (``write(_:deadline:)``'s `send`).
    /// A peer that reset the connection gives `.failed(.system(call: "send", …))`.
    package func transmit(_ bytes: UnsafeRawBufferPointer) -> Transfer {
        if state.withLock({ $0.shut }) { return .failed(.closed) }
        while true {
            let sent = send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            let failure = errno
            if sent >= 0 { return .moved(sent) }
            switch failure {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: return .failed(.system(call: "send", errno: failure))
            }
        }
    }

    /// Calls `handler` back once, on the loop thread, at the next edge in `direction`, or with
    /// ``SocketError/timedOut`` at `deadline`, or with ``SocketError/closed`` at a ``shutdown()`` or
    /// ``close()`` (on the caller's thread then): the wait of a task, for a caller driven by callbacks.
    /// The same invariant holds (the type's documentation): an edge already recorded is not waited for.
    ///
    /// - Returns: `true` when an edge was recorded already (nothing is stored, `handler` is not called:
    ///   retry the system call now); `false` when `handler` will be called.
    package func notify(_ handler: any ReadinessHandler, when direction: IODirection,
                        deadline: ContinuousClock.Instant?) -> Bool {
        let decision = state.withLock { state -> Decision in
            if state.shut { return .refuse(.closed) }
            if state[direction].ready {
                state[direction].ready = false
                state[direction].drained = false
                return .retry
            }
            state.nextWaiterID += 1
            return .suspend(schedule: Self.store(Waiter(id: state.nextWaiterID, resumer: .handler(handler), deadline: deadline),
                                                 direction, in: &state))
        }
        switch decision {
        case .retry:
            return true
        case .refuse:
            // Shut: the system call fails at once with `.closed`, so the caller learns it by retrying.
            return true
        case .suspend(let deadline?):
            loop.schedule(token, direction, at: deadline)
            return false
        case .suspend(nil):
            return false
        }
    }

    /// Whether an idle connection is still fit for another request: a non-blocking peek finds nothing
    /// to read (no FIN, no reset, no stray bytes) and the socket is not shut down.
    ///
    /// - Parameter trustingEdges: Skip the peek when the last read drained the socket and no read edge
    ///   has been recorded since (a FIN, a reset or a byte each bring one). Only an edge still on its way
    ///   from the kernel to the loop is missed then, a window the caller must be able to afford (a
    ///   request it can send again on a fresh connection).
    package func isQuiet(trustingEdges: Bool = false) -> Bool {
        let known = state.withLock { state -> Bool? in
            if state.shut { return false }
            return trustingEdges && state.read.drained && !state.read.ready && !state.hungUp ? true : nil
        }
        if let known { return known }
        var byte: UInt8 = 0
        let count = recv(descriptor, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
        return count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
    }

    /// Whether ``shutdown()`` or ``close()`` was called.
    package var isShut: Bool { state.withLock { $0.shut } }

    /// Waits for a read edge (new data, a connection to accept, end of stream, an error). The caller
    /// retries its system call afterwards.
    package func waitReadable(deadline: ContinuousClock.Instant?) async throws(SocketError) {
        try await wait(.read, deadline: deadline)
    }

    /// Waits for a write edge (a non-blocking `connect` has finished, one way or the other, or buffer
    /// space is free). The caller checks the socket afterwards.
    package func waitWritable(deadline: ContinuousClock.Instant?) async throws(SocketError) {
        try await wait(.write, deadline: deadline)
    }

    /// Sends a FIN: the peer reads end of stream, while this side can still read (half close).
    package func shutdownWrite() {
        _ = Glibc.shutdown(descriptor, Int32(SHUT_WR))
    }

    /// Shuts the socket down in both directions and fails any waiting read or write with
    /// ``SocketError/closed`` (a waiting handler is called back on the caller's thread). Safe from any
    /// task, also after ``close()`` (then it does nothing); the descriptor stays open until ``close()``.
    package func shutdown() {
        let waiters = state.withLock { state -> [Waiter] in
            // Under the lock, so never after `close()` freed the descriptor (its number may be another
            // socket's by then).
            guard !state.closed else { return [] }
            state.shut = true
            _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
            return Self.takeWaiters(&state)
        }
        waiters.forEach { $0.resume(throwing: .closed) }
    }

    /// Fails waiters, deregisters the socket from the loop and closes the descriptor. Idempotent.
    package func close() {
        let waiters = state.withLock { state -> [Waiter]? in
            guard !state.closed else { return nil }
            state.closed = true
            state.shut = true
            return Self.takeWaiters(&state)
        }
        guard let waiters else { return }
        loop.remove(descriptor, token: token)
        _ = Glibc.close(descriptor)
        waiters.forEach { $0.resume(throwing: .closed) }
    }

    /// An edge from the loop: hand it to the waiting task (which retries its system call) or, with no
    /// task waiting, record it in `ready` (the invariant in the type's documentation).
    package func handle(events: UInt32) {
        let failed = EPOLLHUP.rawValue | EPOLLERR.rawValue
        let readable = events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | failed) != 0
        let writable = events & (EPOLLOUT.rawValue | failed) != 0
        // Two optionals, not an array: this runs for every edge of every socket.
        let (reader, writer) = state.withLock { state -> (Waiter?, Waiter?) in
            guard !state.closed else { return (nil, nil) }
            if events & (EPOLLRDHUP.rawValue | failed) != 0 { state.hungUp = true }
            if readable { state.read.drained = false }
            return (readable ? Self.takeWaiter(&state.read) : nil, writable ? Self.takeWaiter(&state.write) : nil)
        }
        reader?.resume()
        writer?.resume()
    }

    /// An edge in `direction`: its waiter, taken, or with none waiting, `ready` set.
    private static func takeWaiter(_ direction: inout Direction) -> Waiter? {
        guard let waiter = direction.waiter else {
            direction.ready = true
            return nil
        }
        direction.waiter = nil
        return waiter
    }

    /// This direction's timer fired: fail the waiter whose deadline has passed, or ask for the later
    /// deadline of the waiter now waiting. An entry that is not the direction's live one is stale.
    package func timerFired(_ direction: IODirection, deadline: ContinuousClock.Instant, now: ContinuousClock.Instant)
        -> ContinuousClock.Instant?
    {
        let (expired, again) = state.withLock { state -> (Waiter?, ContinuousClock.Instant?) in
            guard state[direction].scheduled == deadline else { return (nil, nil) }
            state[direction].scheduled = nil
            guard let waiter = state[direction].waiter, let due = waiter.deadline else { return (nil, nil) }
            if due <= now {
                state[direction].waiter = nil
                return (waiter, nil)
            }
            state[direction].scheduled = due
            return (nil, due)
        }
        expired?.resume(throwing: .timedOut)
        return again
    }

    /// Suspends until an edge in `direction`, unless one already arrived (then returns at once, for the
    /// caller to retry), the deadline passes, the task is cancelled or the socket is shut down.
    private func wait(_ direction: IODirection, deadline: ContinuousClock.Instant?) async throws(SocketError) {
        let (id, recorded) = state.withLock { state -> (UInt64, Bool) in
            state.nextWaiterID += 1
            let recorded = state[direction].ready
            state[direction].ready = false
            if recorded { state[direction].drained = false }
            return (state.nextWaiterID, recorded)
        }
        if recorded { return }
        do {
            try await withTaskCancellationHandler {
                try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
                    let decision = state.withLock { state -> Decision in
                        if state.shut { return .refuse(.closed) }
                        if Task.isCancelled { return .refuse(.cancelled) }
                        if state[direction].ready {
                            state[direction].ready = false
                            state[direction].drained = false
                            return .retry
                        }
                        return .suspend(schedule: Self.store(Waiter(id: id, resumer: .task(continuation), deadline: deadline),
                                                             direction, in: &state))
                    }
                    switch decision {
                    case .refuse(let error): continuation.resume(throwing: error)
                    case .retry: continuation.resume()
                    case .suspend(let deadline?): loop.schedule(token, direction, at: deadline)
                    case .suspend(nil): break
                    }
                }
            } onCancel: {
                abandon(id: id, direction, with: .cancelled)
            }
        } catch let error as SocketError {
            throw error
        } catch {
            throw .cancelled
        }
    }

    /// Fails waiter `id` with `error` if it is still waiting.
    private func abandon(id: UInt64, _ direction: IODirection, with error: SocketError) {
        let waiter = state.withLock { state -> Waiter? in
            guard let waiter = state[direction].waiter, waiter.id == id else { return nil }
            state[direction].waiter = nil
            return waiter
        }
        waiter?.resume(throwing: error)
    }

    /// Stores `waiter` as `direction`'s one waiter; returns the deadline to schedule on the loop, if
    /// it is earlier than the direction's live timer (or there is none).
    private static func store(_ waiter: Waiter, _ direction: IODirection, in state: inout State) -> ContinuousClock.Instant? {
        // One waiter per direction (the type's documentation): a second would lose the first's wakeup.
        precondition(state[direction].waiter == nil, "HostPinNet: two waiters on one direction of a socket")
        state[direction].waiter = waiter
        guard let deadline = waiter.deadline, state[direction].scheduled.map({ deadline < $0 }) ?? true else { return nil }
        state[direction].scheduled = deadline
        return deadline
    }

    private static func takeWaiters(_ state: inout State) -> [Waiter] {
        let waiters = [state.read.waiter, state.write.waiter].compactMap { $0 }
        state.read.waiter = nil
        state.write.waiter = nil
        return waiters
    }
}
