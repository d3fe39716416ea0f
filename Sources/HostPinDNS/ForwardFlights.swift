import HostPin
import Synchronization

/// The forwarded questions being asked upstream, one exchange per question however many clients ask it
/// at once (single-flight): a hundred clients asking the same MX on a cold cache make one upstream
/// query, and each gets the reply to write under its own ID and question.
///
/// The exchange belongs to every waiter, so no single client's cancellation ends it; its reply is kept
/// in the ``ForwardCache`` before the flight leaves the table, so a question asked just after finds one
/// or the other.
final class ForwardFlights: Sendable {
    /// A reply, the whole seconds it had been cached (0 when it comes straight from upstream) and what
    /// DNSSEC validation found for it.
    struct Reply: Sendable {
        let wire: [UInt8]
        let age: UInt32
        var dnssec: DNSSECStatus? = nil
        /// Why validation found it insecure, when it did.
        var insecurity: InsecureReason? = nil
    }

    /// The flights running, removed as each completes: no more than the distinct questions (with or
    /// without CD) in flight.
    private let flights = Mutex<[ForwardKey: Flight<Reply>]>([:])
    private let cache: ForwardCache

    /// Flights whose replies go into `cache`.
    init(cache: ForwardCache) {
        self.cache = cache
    }

    /// The reply to `question`: from the flight already asking it, or from a new one that asks
    /// `forwarder` (unless a reply was cached since the caller missed the cache) and keeps its reply.
    ///
    /// - Throws: What `forwarder` throws, shared by every waiter; ``ResolutionError/cancelled`` when the
    ///   calling task is cancelled (the others still get the reply).
    func reply(to question: ForwardKey, from forwarder: any DNSForwarder) async throws(ResolutionError) -> Reply {
        let (flight, leads) = flights.withLock { flights -> (Flight<Reply>, Bool) in
            if let running = flights[question] { return (running, false) }
            let flight = Flight<Reply>()
            flights[question] = flight
            return (flight, true)
        }
        if leads { launch(flight, for: question, asking: forwarder) }
        return try await flight.wait()
    }

    /// The number of questions being asked upstream.
    var count: Int { flights.withLock { $0.count } }

    private func launch(_ flight: Flight<Reply>, for question: ForwardKey, asking forwarder: any DNSForwarder) {
        // Unstructured on purpose: the exchange belongs to every waiter (bounded by the forwarder's budget).
        Task {
            let result: Result<Reply, ResolutionError>
            if let (wire, age, dnssec, insecurity) = cache.reply(for: question.question,
                                                                 checkingDisabled: question.checkingDisabled) {
                // Another flight kept this between the caller's miss and taking the lead.
                result = .success(Reply(wire: wire, age: age, dnssec: dnssec, insecurity: insecurity))
            } else {
                do throws(ResolutionError) {
                    let answer = try await forwarder.forwardValidated(question.question,
                                                                       checkingDisabled: question.checkingDisabled)
                    cache.store(answer, for: question)
                    result = .success(Reply(wire: answer.reply, age: 0, dnssec: answer.dnssec, insecurity: answer.insecurity))
                } catch {
                    result = .failure(error)
                }
            }
            flights.withLock { _ = $0.removeValue(forKey: question) }
            flight.finish(result)
        }
    }
}
