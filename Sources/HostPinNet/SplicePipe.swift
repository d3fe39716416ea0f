import CEpoll

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A pipe through which `splice(2)` moves one direction of a byte relay from socket to socket inside
/// the kernel: the bytes never enter the process (no `recv` into a buffer, no `send` out of it), which
/// is what lets a CONNECT tunnel move bulk data about as fast as a direct connection.
///
/// Each step fills the empty pipe from the source socket and then drains it into the sink, waiting on
/// the sockets' ``SocketChannel`` edges (never blocking a thread) whenever either side would block.
/// A kernel or socket type that refuses `splice` before any byte moved makes ``relay(from:to:idle:moved:)``
/// return `nil`, and the caller copies with `read`/`write` instead.
package struct SplicePipe: ~Copyable {
    private let readEnd: Int32
    private let writeEnd: Int32

    /// The most bytes one step moves: the pipe's capacity, raised from the default 64 KiB where the
    /// kernel allows it (`/proc/sys/fs/pipe-max-size`), so that bulk transfers take fewer steps.
    private let capacity: Int

    /// A new non-blocking, close-on-exec pipe; `nil` when the process is out of descriptors.
    package init?() {
        var ends: [Int32] = [-1, -1]
        guard pipe2(&ends, O_NONBLOCK | O_CLOEXEC) == 0 else { return nil }
        readEnd = ends[0]
        writeEnd = ends[1]
        let raised = fcntl(writeEnd, HOSTPIN_F_SETPIPE_SZ, Self.preferredCapacity)
        capacity = raised > 0 ? Int(raised) : 65_536
    }

    deinit {
        _ = Glibc.close(readEnd)
        _ = Glibc.close(writeEnd)
    }

    private static let preferredCapacity: Int32 = 1 << 20
    private static let flags = HOSTPIN_SPLICE_F_MOVE | HOSTPIN_SPLICE_F_NONBLOCK

    /// Moves bytes from `source` to `sink` until `source` reaches end of stream.
    ///
    /// - Parameters:
    ///   - idle: The longest wait for `source` to have bytes or for `sink` to take them.
    ///   - moved: Called with each step's byte count once `sink` has taken all of it.
    /// - Returns: The bytes moved; `nil` when `splice` was refused (`EINVAL`, `ENOSYS`) before any byte
    ///   moved, so the caller should copy with `read`/`write`.
    /// - Throws: ``SocketError``: `.closed` once either socket is shut down, `.timedOut` after `idle`
    ///   without progress, `.system(call: "splice", …)` for a reset or any other failure.
    package func relay(from source: SocketChannel, to sink: SocketChannel, idle: Duration,
                       moved: (Int) -> Void) async throws(SocketError) -> UInt64?
    {
        var total: UInt64 = 0
        while true {
            if source.isShut || sink.isShut { throw .closed }
            let filled = splice(source.descriptor, nil, writeEnd, nil, UInt(capacity), Self.flags)
            if filled == 0 { return total }
            if filled < 0 {
                let failure = errno
                switch failure {
                case EINTR: continue
                case EAGAIN: try await source.waitReadable(deadline: .after(idle))
                case EINVAL, ENOSYS:
                    guard total == 0 else { throw .system(call: "splice", errno: failure) }
                    return nil
                default: throw .system(call: "splice", errno: failure)
                }
                continue
            }
            try await drain(Int(filled), into: sink, idle: idle)
            moved(Int(filled))
            total += UInt64(filled)
        }
    }

    /// Writes the `count` bytes in the pipe to `sink`, waiting while its send buffer is full.
    private func drain(_ count: Int, into sink: SocketChannel, idle: Duration) async throws(SocketError) {
        var left = count
        while left > 0 {
            if sink.isShut { throw .closed }
            let (written, failure) = Self.withoutSIGPIPE { splice(readEnd, nil, sink.descriptor, nil, UInt(left), Self.flags) }
            if written > 0 {
                left -= Int(written)
                continue
            }
            switch failure {
            case EINTR: continue
            case EAGAIN: try await sink.waitWritable(deadline: .after(idle))
            default: throw .system(call: "splice", errno: failure)
            }
        }
    }

    /// Runs `call` with `SIGPIPE` blocked on this thread, and takes back a `SIGPIPE` it raised.
    ///
    /// `splice` into a socket whose peer has gone raises `SIGPIPE` (unlike `send`, it takes no
    /// `MSG_NOSIGNAL`), and the default action ends the process; the proxy does not change the process's
    /// signal handling, so the signal is blocked for the call and, on `EPIPE`, consumed while blocked.
    private static func withoutSIGPIPE(_ call: () -> Int) -> (result: Int, errno: Int32) {
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
        let result = call()
        let failure = errno
        if result < 0 && failure == EPIPE && sigismember(&previous, SIGPIPE) == 0 {
            var none = timespec(tv_sec: 0, tv_nsec: 0)
            _ = sigtimedwait(&pipeSignal, nil, &none)
        }
        pthread_sigmask(SIG_SETMASK, &previous, nil)
        return (result, failure)
    }
}
