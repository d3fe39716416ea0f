/// The queries in flight on one DoT connection, by the message ID they were sent with. A pure value.
///
/// Callers may send several queries with the same ID (each chose its own), so every query gets an ID
/// unique on the connection (its "wire ID") and its reply gets the query's own ID back. A query that
/// was cancelled or timed out keeps its wire ID reserved until its reply arrives or the connection
/// ends: reused at once, the late reply to the old query would be taken as the reply to a new one.
struct DoTInFlight {
    /// One query sent, or about to be.
    struct Entry: Equatable {
        /// The exchange waiting for the reply; `nil` once abandoned (cancelled, timed out).
        var exchange: UInt64?
        /// The ID the caller's query had, restored in the reply.
        let originalID: UInt16
        /// When the query was handed to the connection.
        let sentAt: ContinuousClock.Instant
    }

    private var entries: [UInt16: Entry] = [:]
    private var wireIDs: [UInt64: UInt16] = [:]
    private var nextWireID: UInt16 = 0

    /// A wire ID for `exchange`'s query, whose own ID is `originalID`; `nil` when all 65 536 are taken.
    mutating func assign(exchange: UInt64, originalID: UInt16, at now: ContinuousClock.Instant) -> UInt16? {
        guard entries.count <= Int(UInt16.max) else { return nil }
        while entries[nextWireID] != nil { nextWireID &+= 1 }
        let wireID = nextWireID
        nextWireID &+= 1
        entries[wireID] = Entry(exchange: exchange, originalID: originalID, sentAt: now)
        wireIDs[exchange] = wireID
        return wireID
    }

    /// The entry a reply with `wireID` answers, removed (its ID free again); `nil` when no query on this
    /// connection has that ID.
    mutating func reply(to wireID: UInt16) -> Entry? {
        guard let entry = entries.removeValue(forKey: wireID) else { return nil }
        if let exchange = entry.exchange { wireIDs[exchange] = nil }
        return entry
    }

    /// Forgets `exchange` (cancelled, timed out) but keeps its wire ID reserved; returns when its query
    /// was sent, or `nil` when it is not on this connection.
    mutating func abandon(_ exchange: UInt64) -> ContinuousClock.Instant? {
        guard let wireID = wireIDs.removeValue(forKey: exchange) else { return nil }
        entries[wireID]?.exchange = nil
        return entries[wireID]?.sentAt
    }

    /// Whether `exchange` is waiting for a reply on this connection.
    func contains(_ exchange: UInt64) -> Bool { wireIDs[exchange] != nil }

    /// The exchanges still waiting, and nothing kept: the connection is gone.
    mutating func removeAll() -> [UInt64] {
        defer {
            entries.removeAll()
            wireIDs.removeAll()
        }
        return Array(wireIDs.keys)
    }
}
