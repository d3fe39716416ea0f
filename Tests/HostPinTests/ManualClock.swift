import HostPin
import Synchronization

/// A monotonic clock the test moves by hand, so expiry is tested without sleeping.
final class ManualClock: MonotonicClock {
    private let now = Mutex<UInt64>(1_000_000_000)

    func nanoseconds() -> UInt64 { now.withLock { $0 } }

    func advance(by duration: Duration) {
        let (seconds, attoseconds) = duration.components
        now.withLock { $0 += UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000) }
    }
}
