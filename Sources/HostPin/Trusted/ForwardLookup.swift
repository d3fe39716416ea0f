/// Asks one upstream a ``ForwardedQuestion``: builds the query, sends it through the upstream's
/// transport, and judges the reply, which is relayed as it came.
enum ForwardLookup {
    /// How asking one upstream ended.
    enum Outcome: Sendable, Hashable {
        /// The reply to relay: NOERROR or NXDOMAIN, a whole response to the question; with what the
        /// validator needs of it when it was read for DNSSEC (`nil` otherwise, and for questions of a
        /// type no RRset answers: RRSIG, ANY and the other meta-types).
        case answered([UInt8], signed: SignedReply?)
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
    ///   - dnssec: Set DO and CD in the query and read the reply for the validator.
    ///   - completion: Gets the reply, or why the upstream failed (see ``judge(_:for:readingDNSSEC:)``), on
    ///     the thread that ended the exchange (``UpstreamTransport/start(_:deadline:completion:)``); must
    ///     not block.
    static func ask(_ transport: any UpstreamTransport, _ question: ForwardedQuestion,
                    deadline: ResolutionDeadline?, meter: UpstreamMetrics.Meter? = nil, dnssec: Bool = false,
                    completion: @escaping @Sendable (Outcome) -> Void) {
        guard let query = AddressQuery.messages(for: question.absoluteName, types: [RecordType(rawValue: question.type)],
                                                dnssec: dnssec)
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
                outcome = judge(wire, for: question, readingDNSSEC: dnssec)
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
    /// With `readingDNSSEC` an answer also carries its records for the validator, from the same parse.
    static func judge(_ wire: [UInt8], for question: ForwardedQuestion, readingDNSSEC: Bool = false) -> Outcome {
        guard let reply = DNSReply(wire: wire, readingDNSSEC: readingDNSSEC), reply.isWholeResponse(to: question.replyQuestion) else {
            return .failed(.badResponse)
        }
        switch reply.rcode {
        case 0, 3: return .answered(wire, signed: readingDNSSEC ? SignedReply(forwarded: reply, question) : nil)
        case 2: return .failed(.servfail)
        case 5: return .failed(.refused)
        default: return .failed(.badResponse)
        }
    }
}
