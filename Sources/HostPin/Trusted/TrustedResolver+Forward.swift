extension TrustedResolver {
    /// Asks the trusted upstreams `question`, of any record type, and returns the reply to relay.
    ///
    /// The same plan as ``resolve(_:family:)``: healthy upstreams in configuration order, then those
    /// ``health`` holds down; one that times out, answers SERVFAIL or REFUSED, fails its encrypted
    /// transport, or sends a reply that is not a whole response to the question (QR clear, another
    /// question, TC set, any RCODE but NOERROR, NXDOMAIN, SERVFAIL and REFUSED; RFC 1035 §4.1.1) is
    /// skipped and held down (after SERVFAIL or REFUSED only as the 10th distinct name within 10 s; see
    /// ``UpstreamHealth``); one that answers is healthy again. Every upstream gets a query of HostPin's
    /// own for the question (a fresh random ID, RD set, EDNS(0) advertising 1232 octets): no flag or
    /// EDNS option of the client's goes upstream. Never the untrusted fallback: a forwarded answer comes
    /// from a trusted upstream or not at all. The whole exchange takes at most ``Configuration/budget``.
    /// Nothing is cached here.
    ///
    /// - Parameter question: What to ask, class IN.
    /// - Returns: The upstream's reply in wire format (RFC 1035 §4) as received: RCODE NOERROR (records,
    ///   or none: NODATA) or NXDOMAIN, with its answer, authority and additional sections. Its ID is the
    ///   one HostPin sent, not the client's.
    /// - Throws: ``ResolutionError/upstreamsFailed(_:)`` listing each upstream's failure in the order
    ///   asked, ``ResolutionError/timeout(budget:_:)`` when ``Configuration/budget`` runs out, and
    ///   ``ResolutionError/cancelled`` when the calling task is cancelled.
    public func forward(_ question: ForwardedQuestion) async throws(ResolutionError) -> [UInt8] {
        try await forwardValidated(question).reply
    }

    /// Forwards `question` as ``forward(_:)`` does, with the reply's DNSSEC validation
    /// (``Configuration/dnssec``): each upstream's reply is validated as an address answer is (the chain
    /// built through that upstream, its key and bogus caches); a bogus one, in ``DNSSECMode/validate``
    /// mode, is that upstream's failure ``UpstreamFailure/Reason/dnssecBogus(_:)`` and the next one is
    /// asked. Names at or below an insecure domain are not validated (insecure).
    ///
    /// - Parameters:
    ///   - question: What to ask, class IN.
    ///   - checkingDisabled: A client's CD (RFC 4035 §3.2.2): the query still carries DO and CD, so the
    ///     reply holds its signatures for the client to check, but it is not validated (status `nil`, a
    ///     bogus reply relayed as it came) and the bogus cache is neither read nor written.
    /// - Returns: The reply to relay with what validation found.
    /// - Throws: As ``forward(_:)``, and ``ResolutionError/dnssecBogus(_:_:)`` (the first bogus reason,
    ///   every failure) when no upstream gave a valid reply and at least one gave a bogus one.
    public func forwardValidated(_ question: ForwardedQuestion, checkingDisabled: Bool = false) async throws(ResolutionError)
        -> ForwardedAnswer
    {
        // A routed question goes to its route's resolver, whose upstreams alone are asked.
        let target = resolver(forQuestionName: question.name)
        if target !== self { return try await target.forwardValidated(question, checkingDisabled: checkingDisabled) }
        // On the callback path, as resolveDetailed(_:family:): the next upstream is asked from the thread
        // that read the last one's failure, not when this task next gets a thread of the pool.
        let deadline = startDeadline()
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let plan = health.plan()
                for index in plan.probes { probe(index, forwarding: question) }
                forward(question, order: plan.order[...], checking: !checkingDisabled, deadline: deadline) { result in
                    continuation.resume(returning: deadline.complete(result))
                }
            }
        } onCancel: {
            deadline.cancel()
        }
        if Task.isCancelled { throw .cancelled }
        return try outcome.get()
    }

    /// Asks the upstreams at `order` `question` one after another until one answers, each from the
    /// callback of the one before.
    private func forward(_ question: ForwardedQuestion, order: ArraySlice<Int>, checking: Bool, deadline: ResolutionDeadline,
                         completion: @escaping @Sendable (Result<ForwardedAnswer, ResolutionError>) -> Void) {
        let attempts = deadline.attempts
        guard let index = order.first else { return completion(.failure(Self.exhausted(attempts.failures))) }
        let upstream = configuration.upstreams[index]
        attempts.begin(upstream, index: index)
        let validator = validators.isEmpty || !checking || isInsecureDomain(question.name) ? nil : validators[index]
        ForwardLookup.ask(transports[index], question, deadline: deadline, meter: metrics.meter(at: index),
                          dnssec: !validators.isEmpty) { [self] outcome in
            validated(outcome, question, by: validator, checking: checking, deadline: deadline) { [self] outcome in
                forwarded(outcome, question, index: index, order: order, checking: checking, deadline: deadline,
                          completion: completion)
            }
        }
    }

    /// The forwarded `outcome` after validation by `validator` (`nil`: not validated — with validation on,
    /// a name under an insecure domain, insecure; a client's CD, `checking` false, no status): the reply
    /// with its status, or, in ``DNSSECMode/validate`` mode, a bogus reply's failure.
    private func validated(_ outcome: ForwardLookup.Outcome, _ question: ForwardedQuestion, by validator: UpstreamValidator?,
                           checking: Bool, deadline: ResolutionDeadline, completion: @escaping @Sendable (Forwarded) -> Void) {
        let reply: [UInt8], signed: SignedReply?
        switch outcome {
        case .answered(let wire, let records): (reply, signed) = (wire, records)
        case .failed(let reason): return completion(.failed(reason))
        case .cancelled: return completion(.cancelled)
        }
        guard let validator, let signed, let owner = WireName(question.absoluteName) else {
            let status: DNSSECStatus? = validators.isEmpty || !checking || signed == nil ? nil : .insecure
            return completion(.answer(ForwardedAnswer(reply: reply, dnssec: status)))
        }
        let mode = configuration.dnssec.mode
        validator.validate([signed][...], name: owner, deadline: deadline) { verdict in
            switch verdict {
            case nil: completion(.cancelled)
            case .secure(let ttls): completion(.answer(ForwardedAnswer(reply: reply, dnssec: .secure, secureTTL: ttls.shortest)))
            case .insecure(let why):
                var answer = ForwardedAnswer(reply: reply, dnssec: .insecure)
                answer.insecurity = why.told
                completion(.answer(answer))
            case .indeterminate: completion(.answer(ForwardedAnswer(reply: reply, dnssec: .indeterminate)))
            case .bogus(let reason):
                completion(mode == .validate ? .failed(.dnssecBogus(reason))
                    : .answer(ForwardedAnswer(reply: reply, dnssec: .bogus(reason))))
            }
        }
    }

    /// How asking one upstream a forwarded question ended, after validation.
    private enum Forwarded: Sendable {
        case answer(ForwardedAnswer)
        case failed(UpstreamFailure.Reason)
        case cancelled
    }

    /// Goes on from the validated `outcome` of the upstream at `index`: a reply ends the forwarding, a
    /// failure moves on to the next upstream in `order`.
    private func forwarded(_ outcome: Forwarded, _ question: ForwardedQuestion, index: Int, order: ArraySlice<Int>,
                           checking: Bool, deadline: ResolutionDeadline,
                           completion: @escaping @Sendable (Result<ForwardedAnswer, ResolutionError>) -> Void) {
        switch outcome {
        case .answer(let answer):
            health.recordSuccess(index)
            completion(.success(answer))
        case .failed(let reason):
            health.recordFailure(index, .init(reason, name: question.name))
            deadline.attempts.record(UpstreamFailure(upstream: configuration.upstreams[index], reason: reason))
            forward(question, order: order.dropFirst(), checking: checking, deadline: deadline, completion: completion)
        case .cancelled:
            completion(.failure(.cancelled))
        }
    }

    /// Asks a held-down upstream whose hold-down has run out `question`, off the forwarding's path
    /// (nobody waits for it), and records the verdict in ``health``: the probe a resolution would send.
    private func probe(_ index: Int, forwarding question: ForwardedQuestion) {
        let health = health
        ForwardLookup.ask(transports[index], question, deadline: nil, meter: metrics.meter(at: index)) { outcome in
            switch outcome {
            case .answered: health.recordSuccess(index)
            case .failed(let reason): health.recordFailure(index, .init(reason, name: question.name))
            case .cancelled: health.recordAbandoned(index)
            }
        }
    }
}
