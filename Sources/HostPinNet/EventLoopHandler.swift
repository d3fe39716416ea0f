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

/// What waits on a ``SocketChannel`` without a task (``SocketChannel/notify(_:when:deadline:)``): a
/// state machine driven by the loop, as an event-driven server's connection is.
package protocol ReadinessHandler: AnyObject, Sendable {
    /// The edge waited for came (`.success`: retry the system call), the deadline passed
    /// (``SocketError/timedOut``), or the socket was shut down (``SocketError/closed``). Called once per
    /// ``SocketChannel/notify(_:when:deadline:)`` that returned `false`, with no lock of the channel held.
    func readiness(_ result: Result<Void, SocketError>)
}
