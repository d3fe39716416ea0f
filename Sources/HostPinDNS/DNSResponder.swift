import HostPin

/// The stub's answers, without sockets: one DNS message in, its response out.
///
/// A query is read (``IncomingMessage``), planned from the rules (``QueryPlan``), resolved through the
/// ``CachingResolver`` when it asks for A or AAAA, forwarded (``DNSForwarder``, one upstream exchange for
/// all the clients asking the same question at once, its replies kept in a cache of their own for their
/// TTL) when it asks for another type, and written back
/// (``ResponseWriter``), all with ldns. With a ``LocalResolverWatch``, every A and AAAA answer is offered
/// to it before the response is written; the offer never waits, and its comparison runs in the background.
/// A query asked again while the trusted cache's answer is unchanged is answered from an ``AnswerCache``
/// of the responses ldns wrote, without ldns.
/// The ``DNSServer`` wraps it in UDP and TCP sockets; tests and other servers can call it directly.
public struct DNSResponder: Sendable {
    /// The trusted cache every A and AAAA query goes through; its TTL limits bound the TTLs given out.
    public let resolver: CachingResolver
    /// The rules: `block` and `pin` decide a name's answer before any resolution (those of ``liveRules``
    /// when the query arrives).
    public var rules: Rules { liveRules.current }
    /// The rules in force, replaceable while the stub runs (a reload); each query reads them once.
    public let liveRules: LiveRules
    /// Where other record types go: the trusted resolver behind ``resolver``, usually; `nil` answers them
    /// REFUSED.
    public let forwarder: (any DNSForwarder)?
    /// How a blocked name is answered. Default: NXDOMAIN.
    public let blockedAnswer: BlockedAnswer
    /// The watch of the local resolver that the A and AAAA answers are offered to (hijack detection;
    /// its answers are never used); `nil` for none.
    public let watch: LocalResolverWatch?
    /// The UDP payload size advertised in responses and the most a UDP response holds, in octets.
    /// Default: 1232, the size that avoids IP fragmentation (RFC 6891 §6.2.5; DNS Flag Day 2020).
    public let udpPayloadSize: UInt16
    /// Where every message is counted by type and outcome (`hostpin_dns_queries_total`); `nil` counts
    /// nothing.
    public let metrics: DNSQueryMetrics?
    /// The forwarder's replies, kept for their TTL (at most the ``resolver``'s cache's
    /// ``ResolutionCache/Limits/maximumTTL``), on that cache's clock.
    let forwardCache: ForwardCache
    /// The forwarded questions being asked upstream (single-flight), their replies kept in ``forwardCache``.
    let forwardFlights: ForwardFlights
    /// The responses to A and AAAA queries answered from the trusted cache, to answer the same query
    /// again without ldns while the trusted cache's answer stays the same.
    let answerCache: AnswerCache

    public init(resolver: CachingResolver, rules: Rules = Rules(), forwarder: (any DNSForwarder)? = nil,
                blockedAnswer: BlockedAnswer = .nxdomain, watch: LocalResolverWatch? = nil, udpPayloadSize: UInt16 = 1232,
                metrics: DNSQueryMetrics? = nil) {
        self.resolver = resolver
        self.watch = watch
        self.metrics = metrics
        liveRules = LiveRules(rules)
        self.forwarder = forwarder
        self.blockedAnswer = blockedAnswer
        self.udpPayloadSize = max(512, udpPayloadSize)
        // The trusted cache's clock: both caches count ages alike, and a clock given to one is the stub's.
        forwardCache = ForwardCache(maximumTTL: resolver.cache.limits.maximumTTL, clock: resolver.cache.clock)
        forwardFlights = ForwardFlights(cache: forwardCache)
        answerCache = AnswerCache()
    }

    /// The response to `message`.
    ///
    /// - Parameters:
    ///   - message: One DNS message as received (for TCP, without its length prefix).
    ///   - transport: How it came, which bounds the response's size (``DNSTransport``).
    /// - Returns: The response, or `nil` when the message gets none: shorter than a header, a response
    ///   itself (QR set), or the calling task was cancelled while its name was being resolved or
    ///   forwarded.
    public func respond(to message: [UInt8], over transport: DNSTransport) async -> [UInt8]? {
        counted(await finish(prepare(message, over: transport), over: transport), over: transport)
    }

    /// A response (or none) with the labels it is counted under.
    struct Reply: Sendable {
        let bytes: [UInt8]?
        let type: DNSQueryMetrics.QueryType
        let outcome: DNSQueryMetrics.Outcome

        /// No response to a message asking `question`.
        static func none(_ question: DNSQuestion?) -> Reply {
            Reply(bytes: nil, type: DNSQueryMetrics.QueryType(question), outcome: .dropped)
        }
    }

    /// Counts `reply` in ``metrics`` and returns its bytes: what a server sends.
    func counted(_ reply: Reply, over transport: DNSTransport) -> [UInt8]? {
        metrics?.record(reply.type, reply.outcome, over: DNSQueryMetrics.Transport(transport))
        return reply.bytes
    }

    /// The part of ``respond(to:over:)`` that never waits: `message` read and planned, and answered when
    /// that takes no upstream — a rule, a refusal, a fresh entry of the trusted cache
    /// (``CachingResolver/cachedAnswer(_:family:)``) or of the forward cache.
    func prepare(_ message: [UInt8], over transport: DNSTransport) -> PreparedResponse {
        let key = AnswerKey(query: message, over: transport)
        // A query asked before: its plan was to resolve this name, and the rules have not been replaced
        // since (a reload) — their generation is read before the rules, so a replacement in between
        // leaves an entry that is never used.
        let generation = liveRules.generation
        var looked: (entry: AnswerCache.Entry, answer: CachedAnswer?)?
        if let key, let entry = answerCache.entry(for: key), entry.rulesGeneration == generation {
            let answer = resolver.cachedAnswer(entry.name, family: entry.family)
            if let answer, entry.isMade(from: answer) {
                if let watch { _ = watch.offer(answer.outcome(name: entry.name), family: entry.family) }
                return .ready(Reply(bytes: entry.template.reply(to: message, nameLength: key.nameLength, age: answer.age),
                                    type: entry.type, outcome: entry.outcome))
            }
            looked = (entry, answer)
        }
        switch IncomingMessage(wire: message) {
        case .drop:
            return .ready(.none(nil))
        case .reject(let header, let question, let rcode):
            return .ready(write(DNSAnswer(rcode: rcode), header, question, transport))
        case .unknownKey(let header, let question, let tsig):
            return .ready(write(DNSAnswer(rcode: .notauth), header, question, transport, tsig: tsig))
        case .query(let query):
            switch QueryPlan.make(for: query, rules: liveRules.current, blocked: blockedAnswer, routing: resolver) {
            case .answer(let answer):
                return .ready(write(answer, query.header, query.question, transport))
            case .resolve(let name, let family):
                // With validation on, a client with DO gets the signed records it validates, and one with
                // CD an answer not validated: both go the forward path, whose reply is the upstream's wire
                // (RRSIGs and NSEC/NSEC3 included) and whose cache keeps CD apart. The address path keeps
                // addresses, CNAMEs and SOA only, with rewritten TTLs: holding every signed RRset there
                // would grow every trusted-cache entry for the few clients that validate themselves.
                if let forwarder, forwarder.validatesDNSSEC, query.header.dnssecOK || query.header.checkingDisabled {
                    return forwarding(query, to: forwarder, over: transport)
                }
                // Looked up once per query, so the cache's statistics count it once.
                let answer = if let looked, looked.entry.name == name, looked.entry.family == family {
                    looked.answer
                } else {
                    resolver.cachedAnswer(name, family: family)
                }
                guard let answer else { return .resolve(query, name, family) }
                let outcome = answer.outcome(name: name)
                _ = watch?.offer(outcome, family: family)
                let reply = write(DNSAnswer(outcome, limits: resolver.cache.limits), query.header, query.question, transport)
                if let key { keep(reply, for: key, name: name, family: family, answer: answer, outcome: outcome, rulesGeneration: generation) }
                return .ready(reply)
            case .forward:
                guard let forwarder else { return .ready(write(.refused, query.header, query.question, transport)) }
                return forwarding(query, to: forwarder, over: transport)
            }
        }
    }

    /// `query` for the forward path: answered from the forward cache (the entry kept for its CD), or to
    /// be asked of `forwarder`.
    private func forwarding(_ query: DNSQuery, to forwarder: any DNSForwarder, over transport: DNSTransport) -> PreparedResponse {
        // The name is as ldns wrote it when it read the query, so ldns reads it again (out of memory aside).
        guard let question = ForwardedQuestion(name: query.question.name, type: query.question.type.rawValue) else {
            return .ready(write(.servfail, query.header, query.question, transport))
        }
        let key = ForwardKey(question: question, checkingDisabled: query.header.checkingDisabled)
        let limit = transport.responseLimit(for: query.header, udpPayloadSize: udpPayloadSize)
        if let (reply, age, dnssec, insecurity) = forwardCache.reply(for: question, checkingDisabled: key.checkingDisabled),
           let relayed = ResponseWriter.relay(reply, to: query, age: age, dnssec: dnssec,
                                              extendedError: insecurity.flatMap(ExtendedDNSError.init(insecure:)),
                                              limit: limit, udpPayloadSize: udpPayloadSize) {
            return .ready(Reply(bytes: relayed, type: DNSQueryMetrics.QueryType(query.question),
                                outcome: DNSQueryMetrics.Outcome(forwarded: reply)))
        }
        return .forward(query, key, forwarder)
    }

    /// The rest of ``respond(to:over:)``: the response once what `prepared` waits for has come — the
    /// trusted cache's resolution, or the forwarder's reply shared with every client asking the same
    /// question meanwhile (``ForwardFlights``), then kept; SERVFAIL when no upstream answered or the reply
    /// does not answer the question; none when the calling task was cancelled.
    func finish(_ prepared: PreparedResponse, over transport: DNSTransport) async -> Reply {
        switch prepared {
        case .ready(let reply):
            return reply
        case .resolve(let query, let name, let family):
            let result: Result<ResolutionOutcome, ResolutionError>
            do throws(ResolutionError) {
                // prepare's cache lookup has counted this one.
                result = .success(try await resolver.resolveDetailed(name, family: family, countingLookup: false))
            } catch {
                result = .failure(error)
            }
            return reply(to: query, family: family, result, over: transport)
        case .forward(let query, let question, let forwarder):
            let reply: ForwardFlights.Reply
            do throws(ResolutionError) {
                reply = try await forwardFlights.reply(to: question, from: forwarder)
            } catch {
                guard let failure = DNSAnswer(error) else { return .none(query.question) }
                return write(failure, query.header, query.question, transport)
            }
            let limit = transport.responseLimit(for: query.header, udpPayloadSize: udpPayloadSize)
            guard let relayed = ResponseWriter.relay(reply.wire, to: query, age: reply.age, dnssec: reply.dnssec,
                                                     extendedError: reply.insecurity.flatMap(ExtendedDNSError.init(insecure:)),
                                                     limit: limit, udpPayloadSize: udpPayloadSize) else {
                return write(.servfail, query.header, query.question, transport)
            }
            return Reply(bytes: relayed, type: DNSQueryMetrics.QueryType(query.question),
                         outcome: DNSQueryMetrics.Outcome(forwarded: reply.wire))
        }
    }

    /// The reply to `query`, a question of `family`, from what resolving it gave.
    func reply(to query: DNSQuery, family: AddressFamily, _ result: Result<ResolutionOutcome, ResolutionError>,
               over transport: DNSTransport) -> Reply {
        let answer: DNSAnswer
        switch result {
        case .success(let outcome):
            _ = watch?.offer(outcome, family: family)
            answer = DNSAnswer(outcome, limits: resolver.cache.limits)
        case .failure(let error):
            guard let failure = DNSAnswer(error) else { return .none(query.question) }
            answer = failure
        }
        return write(answer, query.header, query.question, transport)
    }

    /// Keeps `reply`, written from `outcome`, in ``answerCache`` for the next query with `key`.
    private func keep(_ reply: Reply, for key: AnswerKey, name: HostName, family: AddressFamily, answer: CachedAnswer,
                      outcome: ResolutionOutcome, rulesGeneration: UInt64) {
        guard let bytes = reply.bytes, bytes.count >= 12 + key.nameLength else { return }
        // Each record's TTL at age 0, in the order written: what a hit counts down from.
        let fresh = DNSAnswer(ResolutionOutcome(answer: outcome.answer, ttlLeft: outcome.ttlLeft, age: 0), limits: resolver.cache.limits)
        guard let template = ReplyTemplate(message: bytes, lifetimes: (fresh.records + fresh.authority).map(\.ttl)) else { return }
        answerCache.keep(AnswerCache.Entry(name: name, family: family, answer: answer, template: template,
                                           type: reply.type, outcome: reply.outcome, rulesGeneration: rulesGeneration), for: key)
    }

    private func write(_ answer: DNSAnswer, _ header: DNSRequestHeader, _ question: DNSQuestion?,
                       _ transport: DNSTransport, tsig: TSIGRecord? = nil) -> Reply {
        let limit = transport.responseLimit(for: header, udpPayloadSize: udpPayloadSize)
        let type = DNSQueryMetrics.QueryType(question)
        if let bytes = ResponseWriter.write(answer, to: header, question: question, limit: limit, udpPayloadSize: udpPayloadSize,
                                            tsig: tsig) {
            return Reply(bytes: bytes, type: type, outcome: DNSQueryMetrics.Outcome(answer))
        }
        // ldns could not write it (out of memory, an odd CNAME target): the client may ask elsewhere.
        let failure = ResponseWriter.write(.servfail, to: header, question: question, limit: limit, udpPayloadSize: udpPayloadSize)
        return Reply(bytes: failure, type: type, outcome: failure == nil ? .dropped : .servfail)
    }
}
