/// The ``UpstreamTransport`` of an encrypted upstream: the resolver's queries sent through its
/// ``EncryptedTransport`` (DoH or DoT), each reply matched to its query by message ID and handed back
/// unread (``AddressAnswer`` reads replies of every transport the same way), each failure turned into
/// the ``UpstreamFailure/Reason`` the resolver fails over on.
///
/// Timeouts: an exchange gets ``timeout``, cut to what is left of the resolution's budget, and ends at
/// once when the budget runs out (``ResolutionDeadline/expire()``) or the calling task is cancelled.
final class EncryptedUpstreamTransport: UpstreamTransport {
    /// The DoH or DoT transport, kept for the life of the resolver: its connection is reused.
    let transport: any EncryptedTransport
    /// The longest one exchange may take, connecting included.
    let timeout: Duration
    /// DoH sends every query with ID 0 (RFC 8484 §4.1: the ID adds nothing over HTTPS and defeats HTTP
    /// caches); DoT keeps the query's random ID, which matches replies on the shared connection.
    private let sendsZeroID: Bool

    init(_ transport: any EncryptedTransport, timeout: Duration) {
        self.transport = transport
        self.timeout = timeout
        if case .https = transport.upstream.transport {
            sendsZeroID = true
        } else {
            sendsZeroID = false
        }
    }

    /// Sends `queries` together and waits for their replies. A reply whose ID is not its query's is
    /// `.badResponse` (RFC 1035 §4.1.1: the ID matches a reply to its query; a DoH server answers with
    /// the ID it was sent, RFC 8484 §4.1).
    func exchange(_ queries: [[UInt8]], deadline: ResolutionDeadline?) async -> [ExchangeOutcome] {
        var timeout = timeout
        if let deadline {
            let remaining = deadline.remaining
            guard remaining > .zero else {
                // The budget timer is about to fire: end the resolution as it would.
                deadline.expire()
                return Array(repeating: .cancelled, count: queries.count)
            }
            timeout = min(timeout, remaining)
        }
        let sent = sendsZeroID ? queries.map(Self.withZeroID) : queries
        let transport = transport
        let work = Task { [timeout] in
            await withTaskGroup(of: (Int, EncryptedExchangeResult).self) { group in
                for (index, query) in sent.enumerated() {
                    group.addTask { (index, await transport.exchange(query, timeout: timeout)) }
                }
                var results = [EncryptedExchangeResult](repeating: .failure(.cancelled), count: sent.count)
                for await (index, result) in group { results[index] = result }
                return results
            }
        }
        if let deadline, !deadline.admit(EncryptedWork(task: work)) {
            work.cancel()
            return Array(repeating: .cancelled, count: queries.count)
        }
        let results = await withTaskCancellationHandler { await work.value } onCancel: { work.cancel() }
        return zip(sent, results).map { query, result in Self.outcome(of: result, for: query) }
    }

    /// `query` with message ID 0.
    private static func withZeroID(_ query: [UInt8]) -> [UInt8] {
        var query = query
        if query.count >= 2 { MessageID.write(0, into: &query) }
        return query
    }

    /// What the resolver makes of one exchange's result.
    static func outcome(of result: EncryptedExchangeResult, for query: [UInt8]) -> ExchangeOutcome {
        switch result {
        case .success(let reply):
            // The transports hand back replies of 12 octets or more; the query has its header too.
            guard query.count >= 2, reply.count >= 2, MessageID.read(reply) == MessageID.read(query) else {
                return .failed(.badResponse)
            }
            return .reply(reply)
        case .failure(.cancelled): return .cancelled
        case .failure(.timeout): return .failed(.timeout)
        case .failure(let failure): return .failed(.encrypted(failure))
        }
    }
}

/// The task carrying one exchange, which the resolution's deadline cancels: each transport then
/// returns `.cancelled` at once.
private struct EncryptedWork: InterruptibleExchange {
    let task: Task<[EncryptedExchangeResult], Never>

    func cancel() { task.cancel() }
}
