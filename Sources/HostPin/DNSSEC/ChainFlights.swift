/// One upstream's DNSKEY and DS queries in flight, and what they brought for a few seconds after, so
/// validations that start together ask each chain RRset once (single-flight, as for the answers
/// themselves): a cold batch of a thousand names under one zone sends its five chain queries once, not
/// five thousand times.
///
/// The key cache (``KeyCache``) keeps a zone's keys only once a validation has settled them; between the
/// reply to a chain query and that moment other validations would ask again, which the ``recentLifetime``
/// covers. What is shared is the upstream's reply, never a verdict: every validation still checks every
/// signature itself, and the flights are per upstream (one per ``UpstreamValidator``), so an upstream's
/// records never reach a validation of another one's answer.
///
/// A plain value with no lock and no I/O: its owner guards it and sends the queries; `Waiter` is what the
/// owner resumes (tests use plain values).
package struct ChainFlights<Waiter> {
    /// How long a chain reply's records are handed to validations that ask after it came, in seconds.
    package static var recentLifetime: Int64 { 5 }
    /// The most replies kept for ``recentLifetime``; past it the oldest goes first.
    package static var recentCapacity: Int { 256 }

    /// What a validation asking for an RRset is to do.
    package enum Join: Equatable {
        /// The RRset came a moment ago: take these records (the answer and authority sections).
        case answered([DNSSECRecord])
        /// Another validation's query for it is in flight: wait for ``finish(_:records:at:)``.
        case joined
        /// Nobody is asking: send the query; the waiter is held like the joined ones.
        case lead
    }

    private struct Recent {
        let records: [DNSSECRecord]
        let expires: Int64
    }

    private var flights: [ChainRequest: [(id: UInt64, waiter: Waiter)]] = [:]
    private var recent: [ChainRequest: Recent] = [:]
    private var order: [ChainRequest] = []

    package init() {}

    /// The queries in flight.
    package var inFlight: Int { flights.count }

    /// `waiter` (known by `id`) asks for `request` at `now` (seconds on a monotonic clock).
    package mutating func join(_ request: ChainRequest, id: UInt64, waiter: Waiter, at now: Int64) -> Join {
        if let kept = recent[request], kept.expires > now { return .answered(kept.records) }
        if flights[request] != nil {
            flights[request]!.append((id, waiter))
            return .joined
        }
        flights[request] = [(id, waiter)]
        return .lead
    }

    /// The waiter `id` stops waiting for `request` (its resolution's budget ran out, or it was cancelled):
    /// it is handed back unless ``finish(_:records:at:)`` took it first. The query goes on for the others.
    package mutating func leave(_ request: ChainRequest, id: UInt64) -> Waiter? {
        guard let index = flights[request]?.firstIndex(where: { $0.id == id }) else { return nil }
        return flights[request]!.remove(at: index).waiter
    }

    /// The query for `request` ended at `now`: `records` when it was answered (kept for the next
    /// ``recentLifetime`` seconds), `nil` when it failed (nothing kept: the next asker tries again). Hands
    /// back every waiter, to be resumed with the same outcome.
    package mutating func finish(_ request: ChainRequest, records: [DNSSECRecord]?, at now: Int64) -> [Waiter] {
        let waiters = flights.removeValue(forKey: request) ?? []
        if let records {
            // `order` holds the keys of `recent`, oldest first.
            order.removeAll { $0 == request }
            order.append(request)
            recent[request] = Recent(records: records, expires: now + Self.recentLifetime)
            while let oldest = order.first, recent.count > Self.recentCapacity || recent[oldest]!.expires <= now {
                order.removeFirst()
                recent[oldest] = nil
            }
        }
        return waiters.map(\.waiter)
    }
}
extension ChainFlights: Sendable where Waiter: Sendable {}
