import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A connected, non-blocking TCP socket whose reads and writes suspend the calling task until the
/// kernel is ready, woken by a Dispatch read source and a Dispatch write source.
///
/// Why Dispatch sources (not libuv or libevent from Debian): libdispatch ships with the Swift toolchain
/// and already runs an epoll loop in every process that imports Foundation or Dispatch, so the proxy adds
/// no C dependency, no loop thread of its own and no C callback bridging; a source wakes exactly one
/// suspended task (a checked continuation), so each connection is plain sequential `async` code while
/// no thread ever blocks on a socket. libuv/libevent would add a second event loop beside Dispatch's,
/// with its own thread and a hop back into Swift concurrency for every event.
///
/// Each direction has at most one waiting task (the connection's reader and writer). A source is
/// resumed only while a task waits and suspended as soon as it fires, so an idle socket costs nothing.
/// ``shutdown()`` may be called from any task (the proxy stopping); ``close()`` only by the owner, once
/// no read or write is running.
final class SocketChannel: Sendable {
    /// The socket's file descriptor; closed by the sources' cancel handlers after ``close()``.
    let descriptor: Int32
    /// The remote endpoint, when the kernel reports one.
    let peer: SocketAddress?

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct Direction {
        var waiter: Waiter?
        /// Whether the source is resumed (Dispatch counts suspensions; a created source starts inactive).
        var armed = false
    }

    private struct State {
        var read = Direction()
        var write = Direction()
        var nextWaiterID: UInt64 = 0
        var shut = false
        var closed = false
    }

    private let queue: DispatchQueue
    /// Guards the waiters, the armed flags of both sources and the shut/closed flags; the sources
    /// themselves are resumed, suspended and cancelled only while it is held.
    private let state = Mutex(State())
    /// Holds the two sources (set in `init`, never replaced); resumed, suspended and cancelled only
    /// while `state`'s lock is held too, so their suspension counts match the armed flags.
    private let sources: Mutex<(read: any DispatchSourceRead, write: any DispatchSourceWrite)>

    /// Wraps `descriptor`, which must be a connected stream socket; sets it non-blocking.
    init(descriptor: Int32) {
        self.descriptor = descriptor
        let flags = fcntl(descriptor, F_GETFL)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
        var one: Int32 = 1
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        peer = SocketAddress.of(socket: descriptor, peer: true)
        let queue = DispatchQueue(label: "hostpin.proxy.socket")
        self.queue = queue
        sources = Mutex(Self.makeSources(descriptor: descriptor, queue: queue))
        let onReadable: @Sendable () -> Void = { [weak self] in self?.fire(read: true) }
        let onWritable: @Sendable () -> Void = { [weak self] in self?.fire(read: false) }
        sources.withLock { sources in
            sources.read.setEventHandler(handler: onReadable)
            sources.write.setEventHandler(handler: onWritable)
        }
    }

    /// The two sources of `descriptor`, inactive, whose cancel handlers close it once both have run.
    private static func makeSources(descriptor: Int32, queue: DispatchQueue)
        -> (read: any DispatchSourceRead, write: any DispatchSourceWrite)
    {
        let read = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        let write = DispatchSource.makeWriteSource(fileDescriptor: descriptor, queue: queue)
        let cancelled = Mutex(0)
        let cancelHandler: @Sendable () -> Void = {
            let both = cancelled.withLock { count in
                count += 1
                return count == 2
            }
            if both { Glibc.close(descriptor) }
        }
        read.setCancelHandler(handler: cancelHandler)
        write.setCancelHandler(handler: cancelHandler)
        return (read, write)
    }

    deinit {
        close()
    }

    /// Reads up to `maximum` bytes, waiting until some arrive.
    ///
    /// - Parameter deadline: When to give up waiting; `nil` waits for ever.
    /// - Returns: The bytes read; empty at end of stream (the peer shut down its side).
    /// - Throws: ``SocketError``.
    func read(maximum: Int = 65_536, deadline: DispatchTime?) async throws(SocketError) -> [UInt8] {
        while true {
            if state.withLock({ $0.shut }) { throw .closed }
            var count = 0
            var failure: Int32 = 0
            let bytes = [UInt8](unsafeUninitializedCapacity: maximum) { buffer, initialized in
                count = recv(descriptor, buffer.baseAddress, maximum, 0)
                failure = errno
                initialized = max(0, count)
            }
            if count >= 0 { return bytes }
            switch failure {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: try await wait(read: true, deadline: deadline)
            default: throw .system(call: "recv", errno: failure)
            }
        }
    }

    /// Writes all of `bytes`, waiting while the kernel's send buffer is full.
    ///
    /// - Parameter deadline: When to give up waiting for buffer space; `nil` waits for ever.
    /// - Throws: ``SocketError``; a peer that reset the connection gives `.system(call: "send", …)`.
    func write(_ bytes: some Collection<UInt8>, deadline: DispatchTime?) async throws(SocketError) {
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
            case EAGAIN, EWOULDBLOCK: try await wait(read: false, deadline: deadline)
            default: throw .system(call: "send", errno: failure)
            }
        }
    }

    /// Whether an idle connection is still fit for another request: a non-blocking peek finds nothing
    /// to read (no FIN, no reset, no stray bytes) and the socket is not shut down.
    func isQuiet() -> Bool {
        if state.withLock({ $0.shut }) { return false }
        var byte: UInt8 = 0
        let count = recv(descriptor, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
        return count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
    }

    /// Waits until the socket is writable (a non-blocking `connect` has finished, one way or the other).
    func waitWritable(deadline: DispatchTime?) async throws(SocketError) {
        try await wait(read: false, deadline: deadline)
    }

    /// Sends a FIN: the peer reads end of stream, while this side can still read (half close).
    func shutdownWrite() {
        _ = Glibc.shutdown(descriptor, Int32(SHUT_WR))
    }

    /// Shuts the socket down in both directions and fails any waiting read or write with
    /// ``SocketError/closed``. Safe from any task; the descriptor stays open until ``close()``.
    func shutdown() {
        let waiters = state.withLock { state -> [Waiter] in
            state.shut = true
            let waiters = [state.read.waiter, state.write.waiter].compactMap { $0 }
            state.read.waiter = nil
            state.write.waiter = nil
            return waiters
        }
        _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
        waiters.forEach { $0.continuation.resume(throwing: SocketError.closed) }
    }

    /// Releases the socket: fails waiters, cancels both sources; the descriptor is closed once both
    /// sources have finished. Idempotent.
    func close() {
        let (first, waiters) = state.withLock { state -> (Bool, [Waiter]) in
            let first = !state.closed
            state.closed = true
            state.shut = true
            let waiters = [state.read.waiter, state.write.waiter].compactMap { $0 }
            state.read.waiter = nil
            state.write.waiter = nil
            if first {
                sources.withLock { sources in
                    sources.read.cancel()
                    sources.write.cancel()
                    // A cancelled source runs its cancel handler only once resumed, and Dispatch traps when
                    // a suspended or never-activated source is released.
                    if !state.read.armed { sources.read.resume() }
                    if !state.write.armed { sources.write.resume() }
                }
                state.read.armed = true
                state.write.armed = true
            }
            return (first, waiters)
        }
        _ = first
        waiters.forEach { $0.continuation.resume(throwing: SocketError.closed) }
    }

    /// Suspends until the read (or write) source fires, the deadline passes, the task is cancelled or
    /// the socket is shut down.
    private func wait(read: Bool, deadline: DispatchTime?) async throws(SocketError) {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        do {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let refused: SocketError? = state.withLock { state in
                        if state.shut { return .closed }
                        if Task.isCancelled { return .cancelled }
                        let waiter = Waiter(id: id, continuation: continuation)
                        if read {
                            state.read.waiter = waiter
                            if !state.read.armed {
                                state.read.armed = true
                                sources.withLock { $0.read.resume() }
                            }
                        } else {
                            state.write.waiter = waiter
                            if !state.write.armed {
                                state.write.armed = true
                                sources.withLock { $0.write.resume() }
                            }
                        }
                        return nil
                    }
                    if let refused {
                        continuation.resume(throwing: refused)
                        return
                    }
                    if let deadline {
                        queue.asyncAfter(deadline: deadline) { [weak self] in
                            self?.abandon(id: id, read: read, with: .timedOut)
                        }
                    }
                }
            } onCancel: {
                abandon(id: id, read: read, with: .cancelled)
            }
        } catch let error as SocketError {
            throw error
        } catch {
            throw .cancelled
        }
    }

    /// Fails waiter `id` with `error` if it is still waiting.
    private func abandon(id: UInt64, read: Bool, with error: SocketError) {
        let waiter = state.withLock { state -> Waiter? in
            if read, state.read.waiter?.id == id {
                defer { state.read.waiter = nil }
                return state.read.waiter
            }
            if !read, state.write.waiter?.id == id {
                defer { state.write.waiter = nil }
                return state.write.waiter
            }
            return nil
        }
        waiter?.continuation.resume(throwing: error)
    }

    /// A source fired: wake its waiter and leave the source armed for the next wait (a connection reads
    /// or writes again soon, and suspending and resuming a source costs a trip through Dispatch's
    /// manager thread each time). With no waiter (bytes arrived while the task was busy) it is
    /// suspended, so a socket nobody waits on never fires again and again.
    private func fire(read: Bool) {
        let waiter = state.withLock { state -> Waiter? in
            guard !state.closed else { return nil }
            if read {
                if let waiter = state.read.waiter {
                    state.read.waiter = nil
                    return waiter
                }
                if state.read.armed {
                    state.read.armed = false
                    sources.withLock { $0.read.suspend() }
                }
                return nil
            } else {
                if let waiter = state.write.waiter {
                    state.write.waiter = nil
                    return waiter
                }
                if state.write.armed {
                    state.write.armed = false
                    sources.withLock { $0.write.suspend() }
                }
                return nil
            }
        }
        waiter?.continuation.resume()
    }
}
