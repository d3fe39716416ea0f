/// Asks one upstream a ``ForwardedQuestion``: builds the query, sends it through the upstream's
/// transport, and judges the reply, which is relayed as it came.
enum ForwardLookup {
    /// How asking one upstream ended.
    enum Outcome: Sendable, Hashable {
        /// The reply to relay: NOERROR or NXDOMAIN, a whole response to the question.
        case answered([UInt8])
        /// No reply to relay: why. The next upstream may do better.
        case failed(UpstreamFailure.Reason)
        /// The calling task was cancelled or the resolution's budget ran out.
        case cancelled
    }

    /// Asks `transport` `question`, in a query of HostPin's own (``AddressQuery``: a fresh random ID, RD
    /// set, EDNS(0) with 1232 octets; the DoH transport sends ID 0): nothing of the client's message, its
    /// flags or EDNS options, goes upstream.
    ///
    /// - Parameters:
    ///   - transport: The upstream's transport.
    ///   - question: What to ask.
    ///   - deadline: The budget of the resolution; `nil` for none.
    ///   - meter: Where the query, its round trip and its failure are counted; `nil` for nowhere.
    ///   - completion: Gets the reply, or why the upstream failed (see ``judge(_:for:)``), on the thread
    ///     that ended the exchange (``UpstreamTransport/start(_:deadline:completion:)``); must not block.
    static func ask(_ transport: any UpstreamTransport, _ question: ForwardedQuestion,
                    deadline: ResolutionDeadline?, meter: UpstreamMetrics.Meter? = nil,
                    completion: @escaping @Sendable (Outcome) -> Void) {
        guard let query = AddressQuery.messages(for: question.absoluteName, types: [RecordType(rawValue: question.type)])
        else {
            return completion(.failed(.other(code: AresStatus.outOfMemory.code, message: AresStatus.outOfMemory.description)))
        }
        meter?.sent(1)
        let sent = ContinuousClock.now
        transport.start(query, deadline: deadline) { outcomes in
            let outcome: Outcome
            switch outcomes.first {
            case .reply(let wire):
                meter?.replied(after: ContinuousClock.now - sent)
                outcome = judge(wire, for: question)
            case .failed(let reason):
                outcome = .failed(reason)
            case .cancelled, nil:
                if deadline?.hasExpired == true { meter?.failed(.timeout) }
                return completion(.cancelled)
            }
            if case .failed(let reason) = outcome { meter?.failed(UpstreamMetrics.FailureReason(reason)) }
            completion(outcome)
        }
    }

    /// Whether `wire` may be relayed as the answer to `question`: a whole response with exactly that
    /// question (``DNSReply/isWholeResponse(to:)``: QR set, OPCODE 0, TC clear — c-ares has already asked
    /// again over TCP after a truncated UDP reply — and the question with the name in any case), and
    /// RCODE NOERROR or NXDOMAIN. SERVFAIL and REFUSED are the upstream's failures of those names; a
    /// message ldns cannot read and any other RCODE (FORMERR, NOTIMP, an unassigned one) `.badResponse`.
    static func judge(_ wire: [UInt8], for question: ForwardedQuestion) -> Outcome {
        guard let reply = DNSReply(wire: wire), reply.isWholeResponse(to: question.replyQuestion) else {
            return .failed(.badResponse)
        }
        switch reply.rcode {
        case 0, 3: return .answered(wire)
        case 2: return .failed(.servfail)
        case 5: return .failed(.refused)
        default: return .failed(.badResponse)
        }
    }
}
