import HostPin
import Synchronization

/// A monotonic clock the test moves by hand.
final class TestClock: MonotonicClock {
    private let now = Mutex<UInt64>(1_000_000_000)

    func nanoseconds() -> UInt64 { now.withLock { $0 } }

    func advance(seconds: UInt64) {
        now.withLock { $0 += seconds * 1_000_000_000 }
    }
}
