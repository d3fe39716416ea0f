import Dispatch

extension DispatchTime {
    /// The moment `duration` from now.
    static func after(_ duration: Duration) -> DispatchTime {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = max(0, seconds) * 1_000_000_000 + attoseconds / 1_000_000_000
        return .now() + .nanoseconds(Int(min(nanoseconds, Int64(Int.max))))
    }
}
