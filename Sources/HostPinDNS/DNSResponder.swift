import HostPin

/// The stub's answers, without sockets: one DNS message in, its response out.
///
/// A query is read (``IncomingMessage``), planned from the rules (``QueryPlan``), resolved through the
/// ``CachingResolver`` when it asks for A or AAAA, forwarded (``DNSForwarder``, its replies kept in a
/// cache of their own for their TTL) when it asks for another type, and written back
/// (``ResponseWriter``), all with ldns.
/// The ``DNSServer`` wraps it in UDP and TCP sockets; tests and other servers can call it directly.
public struct DNSResponder: Sendable {
    /// The trusted cache every A and AAAA query goes through; its TTL limits bound the TTLs given out.
    public let resolver: CachingResolver
    /// The rules: `block` and `pin` decide a name's answer before any resolution.
    public let rules: Rules
    /// Where other record types go: the trusted resolver behind ``resolver``, usually; `nil` answers them
    /// REFUSED.
    public let forwarder: (any DNSForwarder)?
    /// How a blocked name is answered. Default: NXDOMAIN.
    public let blockedAnswer: BlockedAnswer
    /// The UDP payload size advertised in responses and the most a UDP response holds, in octets.
    /// Default: 1232, the size that avoids IP fragmentation (RFC 6891 §6.2.5; DNS Flag Day 2020).
    public let udpPayloadSize: UInt16
    /// Where every message is counted by type and outcome (`hostpin_dns_queries_total`); `nil` counts
    /// nothing.
    public let metrics: DNSQueryMetrics?
    /// The forwarder's replies, kept for their TTL (at most the ``resolver``'s cache's
    /// ``ResolutionCache/Limits/maximumTTL``).
    let forwardCache: ForwardCache

    public init(resolver: CachingResolver, rules: Rules = Rules(), forwarder: (any DNSForwarder)? = nil,
                blockedAnswer: BlockedAnswer = .nxdomain, udpPayloadSize: UInt16 = 1232, metrics: DNSQueryMetrics? = nil) {
        self.resolver = resolver
        self.metrics = metrics
        self.rules = rules
        self.forwarder = forwarder
        self.blockedAnswer = blockedAnswer
        self.udpPayloadSize = max(512, udpPayloadSize)
        forwardCache = ForwardCache(maximumTTL: resolver.cache.limits.maximumTTL)
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
        let reply = await reply(to: message, over: transport)
        metrics?.record(reply.type, reply.outcome, over: DNSQueryMetrics.Transport(transport))
        return reply.bytes
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

    /// ``respond(to:over:)``'s response, with what it was.
    private func reply(to message: [UInt8], over transport: DNSTransport) async -> Reply {
        switch IncomingMessage(wire: message) {
        case .drop:
            return .none(nil)
        case .reject(let header, let question, let rcode):
            return write(DNSAnswer(rcode: rcode), header, question, transport)
        case .query(let query):
            switch QueryPlan.make(for: query, rules: rules, blocked: blockedAnswer) {
            case .answer(let answer):
                return write(answer, query.header, query.question, transport)
            case .resolve(let name, let family):
                let answer: DNSAnswer
                do throws(ResolutionError) {
                    answer = DNSAnswer(try await resolver.resolveDetailed(name, family: family), limits: resolver.cache.limits)
                } catch {
                    guard let failure = DNSAnswer(error) else { return .none(query.question) }
                    answer = failure
                }
                return write(answer, query.header, query.question, transport)
            case .forward:
                guard let forwarder else { return write(.refused, query.header, query.question, transport) }
                return await forward(query, to: forwarder, over: transport)
            }
        }
    }

    /// The response to `query` from the forward cache, or from `forwarder`'s reply (then kept); SERVFAIL
    /// when no upstream answered; none when the calling task was cancelled.
    private func forward(_ query: DNSQuery, to forwarder: any DNSForwarder, over transport: DNSTransport) async -> Reply {
        let limit = transport.responseLimit(for: query.header, udpPayloadSize: udpPayloadSize)
        // The name is as ldns wrote it when it read the query, so ldns reads it again (out of memory aside).
        guard let question = ForwardedQuestion(name: query.question.name, type: query.question.type.rawValue) else {
            return write(.servfail, query.header, query.question, transport)
        }
        let type = DNSQueryMetrics.QueryType(query.question)
        if let (reply, age) = forwardCache.reply(for: question),
           let relayed = ResponseWriter.relay(reply, to: query, age: age, limit: limit, udpPayloadSize: udpPayloadSize) {
            return Reply(bytes: relayed, type: type, outcome: DNSQueryMetrics.Outcome(forwarded: reply))
        }
        let reply: [UInt8]
        do throws(ResolutionError) {
            reply = try await forwarder.forward(question)
        } catch {
            guard let failure = DNSAnswer(error) else { return .none(query.question) }
            return write(failure, query.header, query.question, transport)
        }
        // A reply that does not answer this question is neither relayed nor kept.
        guard let relayed = ResponseWriter.relay(reply, to: query, limit: limit, udpPayloadSize: udpPayloadSize) else {
            return write(.servfail, query.header, query.question, transport)
        }
        forwardCache.store(reply, for: question)
        return Reply(bytes: relayed, type: type, outcome: DNSQueryMetrics.Outcome(forwarded: reply))
    }

    private func write(_ answer: DNSAnswer, _ header: DNSRequestHeader, _ question: DNSQuestion?,
                       _ transport: DNSTransport) -> Reply {
        let limit = transport.responseLimit(for: header, udpPayloadSize: udpPayloadSize)
        let type = DNSQueryMetrics.QueryType(question)
        if let bytes = ResponseWriter.write(answer, to: header, question: question, limit: limit, udpPayloadSize: udpPayloadSize) {
            return Reply(bytes: bytes, type: type, outcome: DNSQueryMetrics.Outcome(answer))
        }
        // ldns could not write it (out of memory, an odd CNAME target): the client may ask elsewhere.
        let failure = ResponseWriter.write(.servfail, to: header, question: question, limit: limit, udpPayloadSize: udpPayloadSize)
        return Reply(bytes: failure, type: type, outcome: failure == nil ? .dropped : .servfail)
    }
}
