/// One of the two directions a socket waits in.
package enum IODirection: Sendable, Hashable {
    case read
    case write
}

/// What an ``EventLoop`` calls for a registered descriptor. Both methods run on the loop thread, must not
/// block, and resume continuations only after releasing their own locks.
package protocol EventLoopHandler: AnyObject, Sendable {
    /// The descriptor became ready: `events` is epoll's mask (`EPOLLIN`, `EPOLLOUT`, `EPOLLRDHUP`,
    /// `EPOLLHUP`, `EPOLLERR`), reported once per edge.
    func handle(events: UInt32)

    /// A timer scheduled with ``EventLoop/schedule(_:_:at:)`` for `direction` and `deadline` fired at `now`.
    ///
    /// - Returns: A later deadline to schedule for the same direction, if a waiter still needs one.
    func timerFired(_ direction: IODirection, deadline: ContinuousClock.Instant, now: ContinuousClock.Instant)
        -> ContinuousClock.Instant?
}
