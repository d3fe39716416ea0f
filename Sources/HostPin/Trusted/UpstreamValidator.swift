import Foundation
import Synchronization

/// Validates one upstream's answers with DNSSEC: drives an ``AnswerValidation`` per reply, sending each
/// DNSKEY or DS query it asks for (``ChainRequest``) through that same upstream's transport, with DO and
/// CD set, within the resolution's deadline (Unbound's validator asks its iterator the same way).
///
/// Everything runs on the callback path (``UpstreamTransport/start(_:deadline:completion:)``): the next
/// step of a validation runs on the thread that read the last chain reply, with no task per query, so a
/// cooperative pool kept busy by other work (two threads here) never holds a validation past its budget.
/// The signature checks run on that thread too: they are short, bounded by ``ValidationLimits``.
///
/// One per upstream (and one for the untrusted fallback): the DNSKEY and DS sets an upstream gave are
/// trusted only for its own answers, so an upstream that answered bogus never feeds the chain built
/// from the next one; and a question found bogus at one upstream is remembered for that upstream only.
final class UpstreamValidator: Sendable {
    private let transport: any UpstreamTransport
    private let anchors: TrustAnchors
    private let limits: ValidationLimits
    private let meter: UpstreamMetrics.Meter?
    private let clock: any MonotonicClock
    /// Guards this upstream's validated DNSKEY sets and bad-key entries (``KeyCache``): read to seed each
    /// validation with the zones above its owners, written with what the validation settled. Validations
    /// of the same zone that overlap may both fetch its keys; the later store wins, both are valid.
    private let keyCache: Mutex<KeyCache>
    /// Guards the questions this upstream answered bogus in the last 60 s (``BogusCache``): read before a
    /// validation starts, written after a bogus verdict.
    private let bogusCache = Mutex(BogusCache())
    /// Signature checks spent by every validation so far (what tests and measurements count).
    private let checks = Atomic<Int>(0)
    /// DNSKEY and DS queries sent so far.
    private let chainQueries = Atomic<Int>(0)
    /// Guards the chain queries in flight and their recent replies (``ChainFlights``): joined by each
    /// validation's fetch, ended by the query's reply or a waiter's deadline.
    private let flights = Mutex(ChainFlights<ChainWaiter>())
    /// Numbers the waiters of ``flights``.
    private let waiterIDs = Atomic<UInt64>(0)

    /// - Parameters:
    ///   - transport: The upstream's transport, the one its answers came through.
    ///   - anchors: Where chains start.
    ///   - limits: The KeyTrap caps, per resolution.
    ///   - meter: Where the chain queries are counted with the upstream's own; `nil` for nowhere.
    ///   - clock: The monotonic clock cache entries expire on.
    init(transport: any UpstreamTransport, anchors: TrustAnchors, limits: ValidationLimits = ValidationLimits(),
         meter: UpstreamMetrics.Meter?, clock: any MonotonicClock, keyCapacity: Int = 1024) {
        self.transport = transport
        self.anchors = anchors
        self.limits = limits
        self.meter = meter
        self.clock = clock
        keyCache = Mutex(KeyCache(capacity: keyCapacity))
    }

    /// Signature checks spent so far, over every validation.
    var signatureChecks: Int { checks.load(ordering: .relaxed) }
    /// DNSKEY and DS queries sent so far.
    var chainQueriesSent: Int { chainQueries.load(ordering: .relaxed) }

    /// Validates `replies` (one per type asked: A then AAAA for `any`), one after the other, and gives the
    /// worse verdict (``worse(_:_:)``).
    ///
    /// - Parameters:
    ///   - replies: At least one reply, each claiming an answer, NXDOMAIN or NODATA for `name`.
    ///   - name: The name asked for.
    ///   - deadline: The resolution's budget; chain queries stop when it runs out.
    ///   - completion: The verdict, or `nil` when `deadline` ran out (or the exchange was cancelled)
    ///     during a chain query; on the thread that ended the last step; must not block.
    func validate(_ replies: ArraySlice<SignedReply>, name: WireName, deadline: ResolutionDeadline?,
                  completion: @escaping @Sendable (DNSSECVerdict?) -> Void) {
        guard let first = replies.first else { return completion(.indeterminate) }
        validateOne(first, name: name, deadline: deadline) { [self] verdict in
            guard let verdict else { return completion(nil) }
            // A bogus verdict is the worst: the other family's reply need not be checked. It counts as the
            // upstream's failure reason `bogus` in either mode (report mode hands the answer out).
            if case .bogus = verdict {
                meter?.failed(.bogus)
                return completion(verdict)
            }
            guard replies.count > 1 else { return completion(verdict) }
            let rest = replies.dropFirst()
            validate(rest, name: name, deadline: deadline) { other in
                guard let other else { return completion(nil) }
                completion(Self.worse(verdict, other))
            }
        }
    }

    /// The worse of two verdicts on one name's answers (bogus, then insecure, then indeterminate, then
    /// secure); two secure verdicts give both answers' TTLs (``SecureTTLs/merged(with:)``: the A and
    /// AAAA halves of `any` keep their own, and a secure NODATA beside secure addresses does not cap them).
    static func worse(_ one: DNSSECVerdict, _ other: DNSSECVerdict) -> DNSSECVerdict {
        func rank(_ verdict: DNSSECVerdict) -> Int {
            switch verdict {
            case .secure: 0
            case .indeterminate: 1
            case .insecure: 2
            case .bogus: 3
            }
        }
        if case .secure(let ttls) = one, case .secure(let otherTTLs) = other { return .secure(ttls.merged(with: otherTTLs)) }
        return rank(other) > rank(one) ? other : one
    }

    /// Seconds on ``clock``, the caches' time.
    private var cacheNow: Int64 { Int64(clock.nanoseconds() / 1_000_000_000) }

    /// Validates one reply: the bogus cache first, then the machine seeded with the key cache's entries.
    private func validateOne(_ reply: SignedReply, name: WireName, deadline: ResolutionDeadline?,
                             completion: @escaping @Sendable (DNSSECVerdict?) -> Void) {
        let now = cacheNow
        if let reason = bogusCache.withLock({ $0.reason(for: name, type: reply.type, at: now) }) {
            return completion(.bogus(reason))
        }
        let owners = CollectionOfOne(name) + (reply.answer + reply.authority).map(\.owner)
        let known = keyCache.withLock { $0.keys(covering: owners, at: now) }
        // Signatures are checked against the wall clock (their validity window is in seconds since 1970).
        var validation = AnswerValidation(name: name, type: reply.type, answer: reply.answer, authority: reply.authority,
                                          claim: reply.claim, anchors: anchors, knownKeys: known,
                                          now: Int64(Date().timeIntervalSince1970), limits: limits)
        let step = validation.start()
        let signed = (reply.answer + reply.authority).contains { $0.type == DNSSECRecord.Kind.rrsig }
        drive(validation, step: step, question: (name, reply.type), signed: signed, deadline: deadline,
              completion: completion)
    }

    /// Takes `step`: a verdict ends the validation (the caches keep what it settled), a fetch sends the
    /// chain query and takes the next step from its reply's callback. `signed`: the reply held an RRSIG.
    private func drive(_ validation: AnswerValidation, step: AnswerValidation.Step, question: (WireName, UInt16),
                       signed: Bool, deadline: ResolutionDeadline?,
                       completion: @escaping @Sendable (DNSSECVerdict?) -> Void) {
        switch step {
        case .verdict(var verdict):
            if case .bogus(let reason) = verdict, reason.problem != .signaturesMissing, !signed {
                // A reply under an anchor without a single RRSIG, whose chain then broke too (the walk for a
                // proof of an unsigned delegation asked the same upstream, which failed or stripped that as
                // well — the lab's dnsmasq hijacker fails `. DNSKEY`): named for what was wrong with the
                // answer itself and its likely cause, as the machine names an RRset without RRSIGs in a
                // signed zone.
                verdict = .bogus(BogusReason(rrset: "\(question.0) \(RRset.typeName(question.1))", problem: .signaturesMissing))
            }
            settle(validation, verdict, question: question)
            completion(verdict)
        case .fetch(let request):
            fetch(request, deadline: deadline) { [self] fetched in
                var validation = validation
                let next: AnswerValidation.Step
                switch fetched {
                case .cancelled: return completion(nil)
                case .records(let records): next = validation.received(request, records: records)
                // A chain query that failed (timeout, SERVFAIL, a bad reply) is answered with nothing: the
                // RRset is missing, so the answer is bogus — never taken unvalidated.
                case .failed: next = validation.received(request, records: [])
                }
                drive(validation, step: next, question: question, signed: signed, deadline: deadline,
                      completion: completion)
            }
        }
    }

    /// Keeps what a finished validation settled: every key set it validated, and a bogus verdict for its
    /// question. As Unbound does, a chain query that failed (its tries ran out, SERVFAIL) leaves a bad-key
    /// entry and the bogus verdict for 60 s too: a flood of names through an upstream that cannot give the
    /// chain then fails over at once, rather than each waiting for that upstream's tries. (A query cut by
    /// the resolution's deadline settles nothing: the validation ends without a verdict.)
    private func settle(_ validation: AnswerValidation, _ verdict: DNSSECVerdict, question: (WireName, UInt16)) {
        checks.add(validation.checksSpent, ordering: .relaxed)
        let now = cacheNow
        if !validation.validatedKeys.isEmpty { keyCache.withLock { $0.store(validation.validatedKeys, at: now) } }
        if case .bogus(let reason) = verdict {
            bogusCache.withLock { $0.store(reason, for: question.0, type: question.1, at: now) }
        }
    }

    /// What one chain query brought.
    fileprivate enum Fetched: Sendable {
        /// The reply's answer and authority sections (a DS query's NSEC proof is in the authority).
        case records([DNSSECRecord])
        case failed
        case cancelled
    }

    /// Gives `completion` `request`'s RRset from this upstream: the records a query for it brought in the
    /// last seconds, or those of the query in flight for it (``ChainFlights``), or of a query sent now.
    /// `completion` runs once: with the outcome, or `.cancelled` as soon as `deadline` runs out.
    private func fetch(_ request: ChainRequest, deadline: ResolutionDeadline?,
                       completion: @escaping @Sendable (Fetched) -> Void) {
        let waiter = ChainWaiter(id: waiterIDs.add(1, ordering: .relaxed).newValue, request: request,
                                 validator: self, completion: completion)
        switch flights.withLock({ $0.join(request, id: waiter.id, waiter: waiter, at: cacheNow) }) {
        case .answered(let records): return waiter.resume(.records(records))
        case .joined: break
        // Sent whatever becomes of this waiter, so every flight ends and resumes whoever joined it.
        case .lead: send(request)
        }
        // Registered after joining, so a budget that runs out at any moment finds the waiter to cancel
        // (``leave(_:)``), or has run out already and it leaves now.
        if let deadline, !deadline.admit(waiter) { leave(waiter) }
    }

    /// `waiter` stops waiting (its budget ran out, or its resolution was cancelled): resumed with
    /// `.cancelled` unless its flight ended first.
    fileprivate func leave(_ waiter: ChainWaiter) {
        flights.withLock { $0.leave(waiter.request, id: waiter.id) }?.resume(.cancelled)
    }

    /// Asks the upstream for `request`'s RRset with DO and CD set, in a query built by ldns
    /// (``AddressQuery/messages(for:types:dnssec:)-(String,_,_)``), and resumes every waiter of its flight
    /// with the reply's records. Sent without a resolution's deadline: it serves every validation that
    /// joins it, each cut at its own budget; the transport's timeout and tries bound it.
    private func send(_ request: ChainRequest) {
        let (zone, type) = switch request {
        case .dnskey(let zone): (zone, DNSSECRecord.Kind.dnskey)
        case .ds(let zone): (zone, DNSSECRecord.Kind.ds)
        }
        guard let question = ForwardedQuestion(name: zone.description, type: type),
              let query = AddressQuery.messages(for: question.absoluteName, types: [RecordType(rawValue: type)], dnssec: true)
        else { return finish(request, .failed) }
        chainQueries.add(1, ordering: .relaxed)
        meter?.sent(1)
        let sent = ContinuousClock.now
        let meter = meter
        transport.start(query, deadline: nil) { [self] outcomes in
            switch outcomes.first {
            case .reply(let wire):
                meter?.replied(after: ContinuousClock.now - sent)
                guard let reply = DNSReply(wire: wire, readingDNSSEC: true), reply.isWholeResponse(to: question.replyQuestion)
                else {
                    meter?.failed(.malformed)
                    return finish(request, .failed)
                }
                guard reply.rcode == 0 || reply.rcode == 3 else {
                    meter?.failed(reply.rcode == 2 ? .servfail : reply.rcode == 5 ? .refused : .malformed)
                    return finish(request, .failed)
                }
                finish(request, .records(reply.signedAnswer + reply.signedAuthority))
            case .failed(let reason):
                meter?.failed(UpstreamMetrics.FailureReason(reason))
                finish(request, .failed)
            case .cancelled, nil:
                finish(request, .cancelled)
            }
        }
    }

    /// Ends `request`'s flight with `fetched`: every waiter still there is resumed with it.
    private func finish(_ request: ChainRequest, _ fetched: Fetched) {
        let records: [DNSSECRecord]? = if case .records(let records) = fetched { records } else { nil }
        let waiters = flights.withLock { $0.finish(request, records: records, at: cacheNow) }
        for waiter in waiters { waiter.resume(fetched) }
    }
}

/// One validation waiting for a chain RRset (``UpstreamValidator``'s flights): resumed once, by the
/// flight's end or by its resolution's deadline (as an ``InterruptibleExchange``), whichever comes first.
private final class ChainWaiter: InterruptibleExchange {
    let id: UInt64
    let request: ChainRequest
    private let validator: UpstreamValidator
    private let completion: @Sendable (UpstreamValidator.Fetched) -> Void
    /// Whether it was resumed: the flight's end and the deadline may race, the first one wins.
    private let resumed = Atomic<Bool>(false)

    init(id: UInt64, request: ChainRequest, validator: UpstreamValidator,
         completion: @escaping @Sendable (UpstreamValidator.Fetched) -> Void) {
        self.id = id
        self.request = request
        self.validator = validator
        self.completion = completion
    }

    func resume(_ fetched: UpstreamValidator.Fetched) {
        guard !resumed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        completion(fetched)
    }

    func cancel() { validator.leave(self) }
}
