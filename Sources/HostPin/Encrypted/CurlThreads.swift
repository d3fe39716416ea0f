import Dispatch
import Foundation
import Synchronization

/// The threads that call into libcurl (and through it OpenSSL), so that a process can stop them and
/// wait for them before it exits.
///
/// `exit()` runs OpenSSL's `atexit` handler (`OPENSSL_cleanup`), which frees OpenSSL's state while the
/// process's other threads still run: a thread inside libcurl then (loading a CA file for a handshake,
/// freeing a connection) reads freed memory and the process crashes instead of exiting with its status.
/// So every libcurl thread of HostPin (the DoH and DoT transports, the interceptor's curl transport, the
/// HTTPS probe of `compare`) is started here, with a way to stop it, and the `hostpin` tool calls
/// ``shutDown(within:)`` before `exit` (see docs/ARCHITECTURE.md, "Exit"). An application using the
/// library should do the same before it exits. As a backstop, the first thread of ``process`` also
/// registers an `atexit` handler that shuts them down (for ``exitGrace``): registered after OpenSSL's,
/// it runs before it.
///
/// A thread's `stop` must make its body return within one turn of its loop: set a flag and wake the
/// thread (`curl_multi_wakeup`, a pipe write), never wait. libcurl calls of such a turn do not block
/// (connects and TLS are non-blocking on a multi handle); the longest is CPU work such as loading a CA
/// file, milliseconds to a second.
public final class CurlThreads: Sendable {
    /// Every libcurl thread of this process.
    public static let process = CurlThreads()

    private struct State {
        var nextID = 0
        /// The `stop` of each thread whose body has not returned yet.
        var running: [Int: @Sendable () -> Void] = [:]
        /// Set by ``shutDown(within:)``: no thread starts any more, and each one that ends signals
        /// ``ended``.
        var closed = false
    }

    private let state = Mutex(State())
    /// Signalled once by each thread that ends once ``shutDown(within:)`` has begun.
    private let ended = DispatchSemaphore(value: 0)

    /// A registry of its own (tests); the process's threads are in ``process``.
    public init() {}

    /// How long the `atexit` backstop waits for the process's threads.
    public static let exitGrace: Duration = .seconds(3)

    /// Registers the `atexit` backstop once, after making sure OpenSSL is initialised (and so has
    /// registered its own cleanup): `exit` runs handlers in the reverse order of registration.
    private static let backstop: Void = {
        CurlLibrary.initialiseOnce()
        atexit { _ = CurlThreads.process.shutDown(within: CurlThreads.exitGrace) }
    }()

    /// Starts `body` on a new thread named `name`, unless the registry has shut down.
    ///
    /// - Parameters:
    ///   - stop: Asks the thread to end: `body` must return soon after, having freed what it holds of
    ///     libcurl. Called at most once, from any thread, possibly before `body` starts or after it returned.
    ///   - body: The thread's work; its libcurl calls happen only here (and `curl_multi_wakeup` in `stop`).
    /// - Returns: `false`, and nothing is started, when ``shutDown(within:)`` has begun: the process is
    ///   exiting, and the caller must fail its work instead of calling libcurl.
    public func start(name: String, stop: @escaping @Sendable () -> Void, _ body: @escaping @Sendable () -> Void) -> Bool {
        if self === Self.process { Self.backstop }
        let id = state.withLock { state -> Int? in
            guard !state.closed else { return nil }
            defer { state.nextID += 1 }
            state.running[state.nextID] = stop
            return state.nextID
        }
        guard let id else { return false }
        let thread = Thread { [self] in
            body()
            state.withLock { state in
                state.running[id] = nil
                if state.closed { ended.signal() }
            }
        }
        thread.name = name
        thread.start()
        return true
    }

    /// The threads whose body has not returned yet.
    public var count: Int { state.withLock { $0.running.count } }

    /// Refuses new threads, stops every running one and waits until each has ended or `limit` has passed.
    /// Blocks the calling thread: call it where blocking is fine (the main thread, just before `exit`),
    /// never on Swift's cooperative pool. Later calls stop nothing more and wait for what is left.
    ///
    /// - Parameter limit: The longest wait, for all threads together.
    /// - Returns: `true` when no libcurl thread is left (`exit` is then safe); `false` when one still ran
    ///   at `limit`: end the process with `_exit`, which runs no `atexit` handler, instead.
    public func shutDown(within limit: Duration) -> Bool {
        let stops = state.withLock { state -> [@Sendable () -> Void] in
            defer { state.closed = true }
            return state.closed ? [] : Array(state.running.values)
        }
        for stop in stops { stop() }
        let deadline = DispatchTime.now() + .milliseconds(limit.millisecondsRoundedUp)
        // Each thread that ends signals once, after leaving `running`: a wait either finds that signal or
        // the count already lower. A signal left over from an earlier call only makes one more check.
        while count > 0 {
            if ended.wait(timeout: deadline) == .timedOut { break }
        }
        return count == 0
    }
}
