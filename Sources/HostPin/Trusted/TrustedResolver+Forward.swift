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
        // On the callback path, as resolveDetailed(_:family:): the next upstream is asked from the thread
        // that read the last one's failure, not when this task next gets a thread of the pool.
        let deadline = startDeadline()
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let plan = health.plan()
                for index in plan.probes { probe(index, forwarding: question) }
                forward(question, order: plan.order[...], deadline: deadline) { result in
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
    private func forward(_ question: ForwardedQuestion, order: ArraySlice<Int>, deadline: ResolutionDeadline,
                         completion: @escaping @Sendable (Result<[UInt8], ResolutionError>) -> Void) {
        let attempts = deadline.attempts
        guard let index = order.first else { return completion(.failure(.upstreamsFailed(attempts.failures))) }
        let upstream = configuration.upstreams[index]
        attempts.begin(upstream, index: index)
        ForwardLookup.ask(transports[index], question, deadline: deadline, meter: metrics.meter(at: index)) { [self] outcome in
            switch outcome {
            case .answered(let reply):
                health.recordSuccess(index)
                completion(.success(reply))
            case .failed(let reason):
                health.recordFailure(index, .init(reason, name: question.name))
                attempts.record(UpstreamFailure(upstream: upstream, reason: reason))
                forward(question, order: order.dropFirst(), deadline: deadline, completion: completion)
            case .cancelled:
                completion(.failure(.cancelled))
            }
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
