import Foundation

/// SIGHUP, the signal to reload. A C handler writes one byte to a pipe (the self-pipe trick, as for
/// ``StopSignal``); a thread of its own blocks reading it and passes each signal on as an element of an
/// `AsyncStream` that holds at most one: signals that arrive during a reload make one more reload, not
/// one each (a hundred SIGHUPs in a row reload at most twice more).
enum ReloadSignal {
    /// Installs the handler (SIGHUP no longer ends the process) and returns the reload requests. Call it
    /// once per process.
    static func requests() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let pipe = reloadPipe
        signal(SIGHUP, onReloadSignal)
        Thread {
            // This thread takes SIGHUP even when the process was started with it blocked (a parent's
            // signal mask is inherited): its read is interrupted, the handler runs, the read is retried.
            var unblocked = sigset_t()
            sigemptyset(&unblocked)
            sigaddset(&unblocked, SIGHUP)
            pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
            var bytes = [UInt8](repeating: 0, count: 64)
            while true {
                let count = read(pipe.read, &bytes, bytes.count)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return }
                continuation.yield()
            }
        }.start()
        return stream
    }
}

/// The pipe ``onReloadSignal(_:)`` writes to; made before the handler is installed. Its write end is
/// non-blocking: a burst of signals that fills it loses nothing that matters (one byte is enough).
private let reloadPipe: (read: Int32, write: Int32) = {
    var descriptors: [Int32] = [-1, -1]
    _ = pipe(&descriptors)
    _ = fcntl(descriptors[1], F_SETFL, O_NONBLOCK)
    return (descriptors[0], descriptors[1])
}()

/// The SIGHUP handler: only async-signal-safe work, one `write`.
private func onReloadSignal(_: Int32) {
    var byte: UInt8 = 1
    _ = write(reloadPipe.write, &byte, 1)
}
