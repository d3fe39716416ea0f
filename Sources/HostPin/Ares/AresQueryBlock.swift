/// Queries handed to a c-ares channel's owner thread together (``AresChannel/submit(_:)``), each reply
/// handed back on that thread as it is read: the batch path's unit of work (docs/ARCHITECTURE.md, "Bulk
/// lookups").
///
/// One object, one inbox entry and one wake-up for the whole block, where ``PendingExchange`` costs an
/// object, a lock, a ticket per query and a closure chain per name. There is no deadline: c-ares's own
/// tries and timeouts end every query (the caller uses a block only when they end within its budget).
final class AresQueryBlock: Sendable {
    /// The DNS messages to send, in wire format.
    let queries: [[UInt8]]
    /// Gets each query's index and outcome, once per query, on the owner thread inside its round (a reply
    /// arrives as `.reply`, a failure as `.failed`, `.cancelled` when the channel is destroyed). It must
    /// not block.
    let onOutcome: @Sendable (Int, ExchangeOutcome) -> Void

    init(queries: [[UInt8]], onOutcome: @escaping @Sendable (Int, ExchangeOutcome) -> Void) {
        self.queries = queries
        self.onOutcome = onOutcome
    }

    /// Every query's outcome `.cancelled`: the channel stopped before sending it.
    func cancel() {
        for index in queries.indices { onOutcome(index, .cancelled) }
    }
}

/// A block being sent on the owner thread: the per-query context pointers c-ares hands back (`void *arg`),
/// in one allocation for the whole block, and how many replies are still owed. Made, used and freed on
/// the owner thread only.
final class SentBlock {
    struct Slot {
        unowned(unsafe) let sent: SentBlock
        let index: Int
    }

    let block: AresQueryBlock
    let slots: UnsafeMutablePointer<Slot>
    private var remaining: Int

    init(_ block: AresQueryBlock) {
        self.block = block
        remaining = block.queries.count
        slots = .allocate(capacity: max(1, block.queries.count))
    }

    deinit {
        slots.deinitialize(count: block.queries.count)
        slots.deallocate()
    }

    /// Hands the outcome of the query at `index` over; `true` when it was the last one owed.
    func finish(_ index: Int, with outcome: ExchangeOutcome) -> Bool {
        block.onOutcome(index, outcome)
        remaining -= 1
        return remaining == 0
    }
}
