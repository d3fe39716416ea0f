#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A clock that never goes backwards, in nanoseconds since an arbitrary start. The cache measures
/// expiry on it so that wall-clock changes neither extend nor cut a TTL; tests supply one they move.
public protocol MonotonicClock: Sendable {
    /// Nanoseconds since the clock's start.
    func nanoseconds() -> UInt64
}

/// `CLOCK_MONOTONIC_COARSE` (Linux `clock_gettime`): the kernel's tick-resolution monotonic clock, a few
/// milliseconds coarse and several times cheaper to read — TTLs are whole seconds.
public struct SystemMonotonicClock: MonotonicClock {
    public init() {}

    public func nanoseconds() -> UInt64 {
        Self.nanoseconds()
    }

    /// The clock read without an instance (what ``ResolutionCache`` calls on a hit).
    static func nanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
