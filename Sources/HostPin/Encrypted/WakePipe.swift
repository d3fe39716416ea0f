#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A non-blocking pipe that wakes a thread sleeping in `poll(2)`: other threads write a byte, the
/// sleeper polls the read end and drains it. (A pipe rather than an eventfd: Swift's Glibc module does
/// not export `eventfd`, and including its header in a second C shim hid it from the first shim's users
/// in a release build.)
struct WakePipe: Sendable {
    /// Polled for `POLLIN` by the thread to wake.
    let readFD: Int32
    private let writeFD: Int32

    /// A new pipe, or `nil` when the process is out of descriptors.
    static func make() -> WakePipe? {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return nil }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        return WakePipe(readFD: fds[0], writeFD: fds[1])
    }

    /// Makes the read end readable. A full pipe (the sleeper has not drained yet) is awake already.
    func wake() {
        var byte: UInt8 = 1
        _ = write(writeFD, &byte, 1)
    }

    /// Empties the read end, so the next `poll(2)` sleeps until the next ``wake()``.
    func drain() {
        var buffer = [UInt8](repeating: 0, count: 256)
        while read(readFD, &buffer, buffer.count) > 0 {}
    }

    /// Closes both ends; call once, when no ``wake()`` can follow.
    func close() {
        closeDescriptor(readFD)
        closeDescriptor(writeFD)
    }
}

/// `close(2)`, out of reach of ``WakePipe/close()``'s own name.
private func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
}
