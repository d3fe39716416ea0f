import Foundation

/// Resolves names through trusted upstream DNS servers only: queries built and replies read with ldns,
/// carried by c-ares (plain DNS) or libcurl (DNS over HTTPS and DNS over TLS).
///
/// Each upstream gets its own transport (a c-ares channel and its owner thread; a DoH or DoT transport
/// with one kept connection), so HostPin knows which upstream answered and decides failover itself
/// (c-ares 1.18 does not remember failing servers):
/// ``health`` holds a failing upstream down and probes it until it answers again. Every reply is read
/// from the message itself, whichever transport carried it: only records of the type asked count, and a
/// reply that is not a well-formed response to the query is that upstream's failure. An encrypted
/// upstream that fails (TLS, HTTP status, timeout, …) is failed over like any other, to the next upstream
/// in the list: plain DNS is used only when it is listed. Servers are never taken from the system
/// configuration, and `/etc/hosts` is never consulted. IP literals and `localhost` are answered without a
/// query. With ``Configuration/dnssec`` on, every answer is validated with DNSSEC (RFC 4033–4035) through
/// a chain built from the same upstream (``UpstreamValidator``); a bogus one fails that upstream over.
/// No caching: put a ``CachingResolver`` in front.
public final class TrustedResolver: HostResolver {
    /// The configuration the resolver was created with.
    public let configuration: Configuration
    /// What the resolver currently thinks of each trusted upstream: healthy, or held down after failures.
    public let health: UpstreamHealth
    /// What each trusted upstream has been asked and how it went: queries, failures by reason, round-trip
    /// times (probes included; the untrusted fallback is not counted).
    public let metrics: UpstreamMetrics
    /// One per upstream, in configuration order.
    let transports: [any UpstreamTransport]
    private let fallback: (any UpstreamTransport)?
    /// One per upstream, in configuration order, when ``Configuration/dnssec`` validates (empty with
    /// ``DNSSECMode/off``): each builds its chains through its own upstream's transport, with its own key
    /// and bogus caches.
    let validators: [UpstreamValidator]
    /// The untrusted fallback's validator, when there is a fallback and validation is on.
    let fallbackValidator: UpstreamValidator?
    /// Runs out each resolution's ``Configuration/budget``.
    let budgetTimer: BudgetTimer
    /// One per route of ``Configuration/routes``, in order, each with its own transports, health, metrics
    /// and validators (``resolver(for:)`` picks one).
    let routeResolvers: [TrustedResolver]

    /// Creates one transport per upstream, and one for ``Configuration/untrustedFallback`` when set. An
    /// encrypted upstream connects to its ``EncryptedUpstream/connectAddresses`` at its first query; one
    /// without any fails every query (``EncryptedTransportFailure/noBootstrapAddress(_:)``).
    ///
    /// - Parameters:
    ///   - configuration: Upstreams and settings.
    ///   - clock: The monotonic clock upstream hold-downs are measured on (tests pass one they move).
    /// - Throws: ``ResolutionError/noUpstreams`` for an empty list, ``ResolutionError/setupFailed(_:)``
    ///   when c-ares cannot create a channel.
    public init(configuration: Configuration, clock: any MonotonicClock = SystemMonotonicClock())
        throws(ResolutionError)
    {
        guard !configuration.upstreams.isEmpty else { throw .noUpstreams }
        self.configuration = configuration
        var transports: [any UpstreamTransport] = []
        for upstream in configuration.upstreams {
            transports.append(try upstream.makeTransport(timeout: configuration.timeout, tries: configuration.tries,
                                                         useTCP: configuration.useTCP))
        }
        self.transports = transports
        fallback = try configuration.untrustedFallback.map { server throws(ResolutionError) in
            try server.makeTransport(timeout: configuration.timeout, tries: configuration.tries,
                                     useTCP: configuration.useTCP)
        }
        budgetTimer = BudgetTimer(budget: configuration.budget)
        var routeResolvers: [TrustedResolver] = []
        for route in configuration.routes.routes {
            routeResolvers.append(try TrustedResolver(configuration: configuration.configuration(for: route), clock: clock))
        }
        self.routeResolvers = routeResolvers
        health = UpstreamHealth(upstreams: configuration.upstreams, firstHoldDown: configuration.firstHoldDown,
                                maximumHoldDown: configuration.maximumHoldDown, clock: clock)
        let metrics = UpstreamMetrics(upstreams: configuration.upstreams)
        self.metrics = metrics
        let dnssec = configuration.dnssec
        if dnssec.mode == .off {
            validators = []
            fallbackValidator = nil
        } else {
            validators = transports.indices.map { index in
                UpstreamValidator(transport: transports[index], anchors: dnssec.trustAnchors,
                                  meter: metrics.meter(at: index), clock: clock)
            }
            fallbackValidator = fallback.map {
                UpstreamValidator(transport: $0, anchors: dnssec.trustAnchors, meter: nil, clock: clock)
            }
        }
    }

    /// Creates a resolver for `upstreams` with default settings.
    ///
    /// - Throws: as ``init(configuration:clock:)``.
    public convenience init(upstreams: [Upstream]) throws(ResolutionError) {
        try self.init(configuration: Configuration(upstreams: upstreams))
    }

    /// The TLS connections opened so far to the encrypted upstream at `index` in the upstream list (one
    /// handshake each; tests check that connections are reused); `nil` for a plain upstream.
    func handshakes(atUpstream index: Int) -> Int? {
        (transports[index] as? EncryptedUpstreamTransport)?.transport.handshakes
    }

    /// Resolves `name` through the trusted upstreams only, asking for A and/or AAAA.
    ///
    /// Healthy upstreams are asked in configuration order, then those ``health`` holds down; one that
    /// times out, answers SERVFAIL or REFUSED, fails its encrypted transport (TLS, HTTP status, …), or
    /// sends a reply that is not a well-formed response to the query (another ID, QR clear, a question
    /// that differs, TC set over TCP, any other RCODE; RFC 1035 §4.1.1) is skipped. It is held down for
    /// other names too, except after SERVFAIL or REFUSED, which hold it down only when they came for 10
    /// distinct names within 10 s with no answer between (``UpstreamHealth``).
    /// NXDOMAIN and NODATA are answers, not failures: they end the resolution. Only records of the type
    /// asked for, on the CNAME chain from `name`, make the answer; with `any` the A
    /// and AAAA queries go out together, and an upstream that fails either has failed (the next one is
    /// asked), though the addresses it gave for the other family are the answer when no trusted upstream
    /// does better. When every trusted upstream has failed and
    /// ``Configuration/untrustedFallback`` is set, that server is asked last; an answer of its that
    /// ``Configuration/untrustedFallbackDetector`` calls hijacked fails instead. `ttl` is the smallest TTL on
    /// the answer, CNAME records included, in seconds. The whole resolution takes at most
    /// ``Configuration/budget``.
    ///
    /// - Parameters:
    ///   - name: A normalised name (``HostName/parse(_:)``).
    ///   - family: A (`v4`), AAAA (`v6`) or both (`any`).
    /// - Returns: A ``Resolution`` with source ``Resolution/Source/upstream`` (``Resolution/Source/literal``
    ///   for IP literals and `localhost`, ``Resolution/Source/untrusted`` from the fallback).
    /// - Throws: ``ResolutionError/nxdomain(_:)`` on NXDOMAIN, ``ResolutionError/nodata(_:_:)`` on NODATA
    ///   (RFC 2308 §2.1, §2.2), ``ResolutionError/upstreamsFailed(_:)`` listing each upstream's failure
    ///   in the order asked (``UpstreamFailure/Reason/badResponse`` for a malformed reply,
    ///   ``UpstreamFailure/Reason/encrypted(_:)`` for a DoH or DoT failure),
    ///   ``ResolutionError/timeout(budget:_:)`` when ``Configuration/budget`` runs out
    ///   (listing the failures so far, the upstream still being asked as a timeout),
    ///   ``ResolutionError/dnssecBogus(_:_:)`` when DNSSEC validation is on (``Configuration/dnssec``, in
    ///   ``DNSSECMode/validate`` mode), no upstream gave a valid answer and at least one gave a bogus one
    ///   (RFC 4035 §5; the answer's ``Resolution/dnssec`` says what validation found otherwise), and
    ///   ``ResolutionError/cancelled`` when the calling task is cancelled.
    public func resolve(_ name: HostName, family: AddressFamily) async throws(ResolutionError) -> Resolution {
        try await resolveDetailed(name, family: family).get()
    }

    /// Resolves `name` as ``resolve(_:family:)`` does, returning NXDOMAIN and NODATA as a
    /// ``NegativeAnswer`` with the zone's SOA record and the CNAME chain, `ttlLeft` the answer's TTL
    /// (``NegativeAnswer/ttl`` for a negative one; 0 for IP literals and `localhost`).
    ///
    /// - Throws: as ``resolve(_:family:)``, except `.nxdomain` and `.nodata`.
    public func resolveDetailed(_ name: HostName, family: AddressFamily) async throws(ResolutionError)
        -> ResolutionOutcome
    {
        // A routed name goes to its route's resolver (which asks only its servers), a routed special-use
        // name (a reverse zone, home.arpa) too instead of being answered here.
        let target = resolver(for: name)
        if target === self, let literal = ResolutionOutcome.literal(for: name, family: family) { return literal }
        // The resolution runs on the callback path (one continuation, no task per upstream asked): the next
        // upstream is asked from the c-ares thread that read the last one's failure, so a cooperative pool
        // kept busy by other work delays only when this task reads the outcome, never the asking (before,
        // an answer that came in milliseconds became a timeout when this task resumed after the budget).
        let deadline = target.startDeadline()
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                target.resolve(name, family: family, deadline: deadline) { continuation.resume(returning: $0) }
            }
        } onCancel: {
            deadline.cancel()
        }
        if Task.isCancelled { throw .cancelled }
        return try outcome.get()
    }

    /// Resolves `name` as ``resolveDetailed(_:family:)`` does, without a task to wait in: `completion` gets
    /// the outcome, on the thread that ended the resolution (a c-ares channel's, the budget timer's, or the
    /// caller's for an IP literal). Every upstream is asked through ``AddressLookup``'s callback path, the
    /// next one from the thread that read the last one's failure: no task, so a busy cooperative pool
    /// cannot hold the resolution past its budget. A caller that resolves many names at once
    /// (``CachingResolver/resolveMany(family:concurrency:sink:)``) then costs no task and no continuation
    /// per name.
    ///
    /// `completion` must not block. It gets what ``resolveDetailed(_:family:)`` returns or throws, except
    /// `.cancelled`: nothing cancels this resolution but its budget (``ResolutionError/timeout(budget:_:)``).
    package func resolveDetailed(_ name: HostName, family: AddressFamily,
                                 completion: @escaping @Sendable (Result<ResolutionOutcome, ResolutionError>) -> Void) {
        let target = resolver(for: name)
        if target === self, let literal = ResolutionOutcome.literal(for: name, family: family) {
            return completion(.success(literal))
        }
        target.resolve(name, family: family, deadline: target.startDeadline(), completion: completion)
    }

    /// A new resolution's deadline, its budget running from now.
    func startDeadline() -> ResolutionDeadline {
        let deadline = ResolutionDeadline(attempts: Attempts(), budget: configuration.budget, health: health)
        budgetTimer.start(deadline)
        return deadline
    }

    /// Probes the upstreams due a probe, then asks the others in the health plan's order;
    /// `completion` gets what ``ResolutionDeadline/complete(_:)`` makes of the outcome.
    private func resolve(_ name: HostName, family: AddressFamily, deadline: ResolutionDeadline,
                         completion: @escaping @Sendable (Result<ResolutionOutcome, ResolutionError>) -> Void) {
        let plan = health.plan()
        for index in plan.probes { probe(index, name: name, family: family) }
        askInOrder(name, family: family, order: plan.order[...], deadline: deadline, lastResort: nil) { result in
            completion(deadline.complete(result))
        }
    }

    /// Asks the upstreams at `order` one after another until one answers, then the untrusted fallback,
    /// each from the callback of the one before. `lastResort` is a trusted upstream's addresses of one
    /// family when it failed the other: the answer only when no trusted upstream does better.
    private func askInOrder(_ name: HostName, family: AddressFamily, order: ArraySlice<Int>,
                            deadline: ResolutionDeadline, lastResort: Resolution?,
                            completion: @escaping @Sendable (Result<ResolutionOutcome, ResolutionError>) -> Void) {
        guard let index = order.first else {
            if let lastResort { return completion(.success(.received(lastResort))) }
            return askFallback(name, family: family, deadline: deadline, completion: completion)
        }
        let upstream = configuration.upstreams[index]
        let attempts = deadline.attempts
        attempts.begin(upstream, index: index)
        AddressLookup.ask(transports[index], for: name, family: family, deadline: deadline,
                          meter: metrics.meter(at: index), dnssec: !validators.isEmpty) { [self] answer, signed in
            let outcome = Self.outcome(of: answer, from: upstream, name, family, source: .upstream)
            validated(outcome, signed: signed, name: name, by: validators.isEmpty ? nil : validators[index],
                      from: upstream, deadline: deadline) { [self] outcome in
                askedInOrder(outcome, index: index, name, family: family, order: order, deadline: deadline,
                             lastResort: lastResort, completion: completion)
            }
        }
    }

    /// Goes on from the validated `outcome` of the upstream at `index`: the answer ends the resolution, a
    /// failure moves on to the next upstream in `order`.
    func askedInOrder(_ outcome: Outcome, index: Int, _ name: HostName, family: AddressFamily,
                              order: ArraySlice<Int>, deadline: ResolutionDeadline, lastResort: Resolution?,
                              completion: @escaping @Sendable (Result<ResolutionOutcome, ResolutionError>) -> Void) {
        let attempts = deadline.attempts
        switch outcome {
        case .answered(let outcome):
            health.recordSuccess(index)
            completion(.success(outcome))
        case .failed(let failure, let partial):
            health.recordFailure(index, .init(failure.reason, name: name.text))
            attempts.record(failure)
            askInOrder(name, family: family, order: order.dropFirst(), deadline: deadline,
                       lastResort: lastResort ?? partial, completion: completion)
        case .cancelled:
            completion(.failure(.cancelled))
        }
    }

    /// Asks the untrusted fallback, when there is one, after every trusted upstream has failed; an answer
    /// of its that ``Configuration/untrustedFallbackDetector`` calls hijacked fails instead.
    private func askFallback(_ name: HostName, family: AddressFamily, deadline: ResolutionDeadline,
                             completion: @escaping @Sendable (Result<ResolutionOutcome, ResolutionError>) -> Void) {
        let attempts = deadline.attempts
        guard let fallback, let server = configuration.untrustedFallback else {
            return completion(.failure(Self.exhausted(attempts.failures)))
        }
        attempts.begin(server, index: nil)
        let detector = configuration.untrustedFallbackDetector
        AddressLookup.ask(fallback, for: name, family: family, deadline: deadline, meter: nil,
                          dnssec: fallbackValidator != nil) { [self] answer, signed in
            let outcome = Self.outcome(of: answer, from: server, name, family, source: .untrusted)
            validated(outcome, signed: signed, name: name, by: fallbackValidator, from: server, deadline: deadline) { outcome in
                Self.fallbackAnswered(outcome, from: server, detector: detector, attempts: attempts, completion: completion)
            }
        }
    }

    /// Ends the resolution with the untrusted fallback's validated `outcome`, unless `detector` calls it
    /// hijacked.
    private static func fallbackAnswered(_ outcome: Outcome, from server: Upstream, detector: HijackDetector,
                                         attempts: Attempts,
                                         completion: @escaping @Sendable (Result<ResolutionOutcome, ResolutionError>) -> Void) {
        let refused: UpstreamFailure?
        switch outcome {
        case .answered(let outcome):
            guard case .addresses(let answer) = outcome.answer else { return completion(.success(outcome)) }
            refused = Self.refusal(of: answer, from: server, by: detector)
            if refused == nil { return completion(.success(outcome)) }
        case .failed(_, let partial?):
            refused = Self.refusal(of: partial, from: server, by: detector)
            if refused == nil { return completion(.success(.received(partial))) }
        case .failed(let failure, nil):
            refused = failure
        case .cancelled:
            return completion(.failure(.cancelled))
        }
        if let refused { attempts.record(refused) }
        completion(.failure(exhausted(attempts.failures)))
    }

    /// The failure to record instead of handing out the untrusted fallback's `answer` when it speaks for
    /// itself as a hijack (no trusted answer to compare with); `nil` when it may be used.
    private static func refusal(of answer: Resolution, from server: Upstream, by detector: HijackDetector)
        -> UpstreamFailure?
    {
        let reasons = detector.hijackReasons(unverified: answer)
        return reasons.isEmpty ? nil : UpstreamFailure(upstream: server, reason: .hijackedAnswer(reasons))
    }

    /// Reacts to a network change (issue 30): closes the encrypted upstreams' kept TLS connections (the
    /// next query opens a new one on the new path; queries in flight on them fail over), ends every
    /// hold-down, and probes each upstream with a query for `probe` in the background, so that one
    /// reachable again is known healthy before a client asks. Only the configured upstreams are asked:
    /// the new network's resolver never is.
    ///
    /// - Parameter probe: The name each upstream is asked for (a name in use); `nil` probes nothing.
    public func networkChanged(probing probe: HostName?) {
        for transport in transports {
            (transport as? EncryptedUpstreamTransport)?.transport.closeConnections()
        }
        health.endHoldDowns()
        guard let probe else { return }
        for index in transports.indices { self.probe(index, name: probe, family: .v4) }
    }

    /// Sends one real query for `name` to a held-down upstream whose hold-down has run out, off the
    /// resolution's path (nobody waits for it), and records the verdict in ``health``.
    func probe(_ index: Int, name: HostName, family: AddressFamily) {
        let upstream = configuration.upstreams[index]
        let health = health
        AddressLookup.ask(transports[index], for: name, family: family, deadline: nil,
                          meter: metrics.meter(at: index)) { answer in
            switch Self.outcome(of: answer, from: upstream, name, family, source: .upstream) {
            case .answered: health.recordSuccess(index)
            case .failed(let failure, _): health.recordFailure(index, .init(failure.reason, name: name.text))
            case .cancelled: health.recordAbandoned(index)
            }
        }
    }

    /// How one query at one upstream ended.
    enum Outcome {
        /// The upstream answered: addresses, NXDOMAIN or NODATA. The resolution ends here.
        case answered(ResolutionOutcome)
        /// The upstream failed; the next one may do better. `partial` holds the addresses of one family
        /// when only the other family's query failed.
        case failed(UpstreamFailure, partial: Resolution?)
        case cancelled
    }

    /// What `answer`, from `upstream`, means for the resolution; `nil` is a cancelled exchange.
    static func outcome(of answer: AddressAnswer?, from upstream: Upstream, _ name: HostName,
                                _ family: AddressFamily, source: Resolution.Source) -> Outcome {
        switch answer {
        case .addresses(let addresses, let cnames):
            .answered(.received(Resolution(name: name, addresses: addresses, cnames: cnames, upstream: upstream,
                                           source: source, receivedAt: Date())))
        case .nodata(let soa, let cnames):
            .answered(.received(NegativeAnswer(name: name, family: family, kind: .nodata, cnames: cnames, soa: soa,
                                               upstream: upstream, source: source, receivedAt: Date())))
        case .nxdomain(let soa, let cnames):
            .answered(.received(NegativeAnswer(name: name, family: family, kind: .nxdomain, cnames: cnames, soa: soa,
                                               upstream: upstream, source: source, receivedAt: Date())))
        case .failed(let reason): .failed(UpstreamFailure(upstream: upstream, reason: reason), partial: nil)
        case .partial(let addresses, let cnames, let reason):
            .failed(UpstreamFailure(upstream: upstream, reason: reason),
                    partial: Resolution(name: name, addresses: addresses, cnames: cnames, upstream: upstream,
                                        source: source, receivedAt: Date()))
        case nil: .cancelled
        }
    }
}
