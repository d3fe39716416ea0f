extension ContinuousClock.Instant {
    /// The moment `duration` from now: the deadline of a socket wait.
    package static func after(_ duration: Duration) -> ContinuousClock.Instant {
        .now + duration
    }
}
