/// How DNS messages reach one upstream and how its replies come back: the seam between reading answers
/// (``AddressLookup``, ``AddressAnswer``) and the wire. Plain DNS over UDP and TCP is ``AresChannel``;
/// DNS over HTTPS and DNS over TLS is ``EncryptedUpstreamTransport``.
///
/// A transport owns everything below the message: connections, retries, timeouts, choosing UDP or TCP,
/// and matching a reply to its query by message ID. It never judges a reply; ``AddressAnswer`` does,
/// the question included, the same way for every transport.
protocol UpstreamTransport: Sendable {
    /// Sends `queries`, DNS messages in wire format (RFC 1035 §4), all at once, and waits until each has
    /// its reply or has failed.
    ///
    /// Returns at once, every outcome `.cancelled`, when the calling task is cancelled or `deadline` runs
    /// out, and leaves every other exchange running.
    ///
    /// - Parameters:
    ///   - queries: The messages to send (A and AAAA for one name: one round trip's wait, not two).
    ///   - deadline: The budget of the resolution the exchange belongs to; `nil` for none.
    /// - Returns: One outcome per query, in the order of `queries`.
    func exchange(_ queries: [[UInt8]], deadline: ResolutionDeadline?) async -> [ExchangeOutcome]

    /// Sends `queries` as ``exchange(_:deadline:)`` does, without a task to wait in: `completion` gets the
    /// outcomes, every one `.cancelled` when `deadline` runs out first. It may run on the transport's own
    /// thread, so it must not block.
    func start(_ queries: [[UInt8]], deadline: ResolutionDeadline?,
               completion: @escaping @Sendable ([ExchangeOutcome]) -> Void)
}

extension UpstreamTransport {
    /// A task of its own that waits in ``exchange(_:deadline:)``: for transports with no cheaper way.
    func start(_ queries: [[UInt8]], deadline: ResolutionDeadline?,
               completion: @escaping @Sendable ([ExchangeOutcome]) -> Void) {
        Task { completion(await exchange(queries, deadline: deadline)) }
    }
}

/// How one query's exchange with an upstream ended.
enum ExchangeOutcome: Sendable {
    /// The reply, a DNS message in wire format, not yet read.
    case reply([UInt8])
    /// No usable reply: why.
    case failed(UpstreamFailure.Reason)
    /// The caller stopped waiting: its task was cancelled or its resolution's budget ran out.
    case cancelled
}
