/// Asks one upstream for the addresses of one name: builds the queries, sends them through the
/// upstream's transport, and reads each reply (``AddressAnswer``).
enum AddressLookup {
    /// Asks `transport` for the A, the AAAA, or (`any`) both records of `name`.
    ///
    /// For `any` the A and AAAA queries go out together and their answers are combined
    /// (``AddressAnswer/combining(_:_:)``).
    ///
    /// - Parameters:
    ///   - transport: The upstream's transport.
    ///   - name: The name to look up; not an IP literal or `localhost` (those need no query).
    ///   - family: The address family asked for.
    ///   - deadline: The budget of the resolution; `nil` for none.
    ///   - meter: Where each query sent, its round trip and its failure are counted; `nil` for nowhere.
    /// - Returns: The answer, or `nil` when the calling task was cancelled or `deadline` ran out.
    static func ask(_ transport: any UpstreamTransport, for name: HostName, family: AddressFamily,
                    deadline: ResolutionDeadline?, meter: UpstreamMetrics.Meter? = nil) async -> AddressAnswer? {
        let types = RecordType.addressTypes(for: family)
        guard let queries = AddressQuery.messages(for: name, types: types) else { return outOfMemory }
        meter?.sent(queries.count)
        let sent = ContinuousClock.now
        let outcomes = await transport.exchange(queries, deadline: deadline)
        var signed: [SignedReply]?
        return read(outcomes, types: types, name: name, roundTrip: ContinuousClock.now - sent, deadline: deadline,
                    meter: meter, signed: &signed)
    }

    /// Asks as ``ask(_:for:family:deadline:meter:)`` does, without a task to wait in: `completion` gets
    /// the answer (`nil` when `deadline` ran out) on the thread that ends the exchange
    /// (``UpstreamTransport/start(_:deadline:completion:)``).
    static func ask(_ transport: any UpstreamTransport, for name: HostName, family: AddressFamily,
                    deadline: ResolutionDeadline?, meter: UpstreamMetrics.Meter?,
                    completion: @escaping @Sendable (AddressAnswer?) -> Void) {
        ask(transport, for: name, family: family, deadline: deadline, meter: meter, dnssec: false) { answer, _ in
            completion(answer)
        }
    }

    /// Asks as ``ask(_:for:family:deadline:meter:completion:)`` does; with `dnssec` the queries carry DO
    /// and CD (``AddressQuery/messages(for:types:dnssec:)-(HostName,_,_)``) and `completion` also gets,
    /// for each reply that answered (addresses, NXDOMAIN, NODATA), its records for the validator, read in
    /// the same parse (A first for `any`).
    static func ask(_ transport: any UpstreamTransport, for name: HostName, family: AddressFamily,
                    deadline: ResolutionDeadline?, meter: UpstreamMetrics.Meter?, dnssec: Bool,
                    completion: @escaping @Sendable (AddressAnswer?, [SignedReply]) -> Void) {
        let types = RecordType.addressTypes(for: family)
        guard let queries = AddressQuery.messages(for: name, types: types, dnssec: dnssec) else {
            return completion(outOfMemory, [])
        }
        meter?.sent(queries.count)
        let sent = ContinuousClock.now
        transport.start(queries, deadline: deadline) { outcomes in
            var signed: [SignedReply]? = dnssec ? [] : nil
            let answer = read(outcomes, types: types, name: name, roundTrip: ContinuousClock.now - sent,
                              deadline: deadline, meter: meter, signed: &signed)
            completion(answer, signed ?? [])
        }
    }

    /// The answer when ldns cannot build the queries, which only running out of memory causes.
    private static var outOfMemory: AddressAnswer {
        .failed(.other(code: AresStatus.outOfMemory.code, message: AresStatus.outOfMemory.description))
    }

    /// Reads the outcome of each query (one per `types`, in order) into the answer, counting them on
    /// `meter`; `nil` when the exchange was cancelled. When `signed` is not `nil`, each reply that answered
    /// is also read for the validator and appended to it.
    static func read(_ outcomes: [ExchangeOutcome], types: [RecordType], name: HostName, roundTrip: Duration,
                             deadline: ResolutionDeadline?, meter: UpstreamMetrics.Meter?,
                             signed: inout [SignedReply]?) -> AddressAnswer? {
        var answers: [AddressAnswer] = []
        for (type, outcome) in zip(types, outcomes) {
            switch outcome {
            case .reply(let wire):
                meter?.replied(after: roundTrip)
                let reply = DNSReply(wire: wire, readingDNSSEC: signed != nil)
                let answer = reply.map { AddressAnswer(reading: $0, name: name.text, type: type) } ?? .failed(.badResponse)
                if let reply, let evidence = SignedReply(reply, type: type, answer: answer) { signed?.append(evidence) }
                if case .failed(let reason) = answer { meter?.failed(UpstreamMetrics.FailureReason(reason)) }
                answers.append(answer)
            case .failed(let reason):
                meter?.failed(UpstreamMetrics.FailureReason(reason))
                answers.append(.failed(reason))
            case .cancelled:
                // The transport ends every query of the exchange at once: all of them timed out when the
                // budget ran out (as the resolution records it), none did when the caller went away.
                if deadline?.hasExpired == true { for _ in outcomes { meter?.failed(.timeout) } }
                return nil
            }
        }
        guard answers.count == 2 else { return answers.first }
        return .combining(answers[0], answers[1])
    }
}
