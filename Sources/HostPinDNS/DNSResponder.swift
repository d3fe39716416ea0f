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
    /// The UDP payload size advertised in responses and the most a UDP response holds, in octets.
    /// Default: 1232, the size that avoids IP fragmentation (RFC 6891 §6.2.5; DNS Flag Day 2020).
    public let udpPayloadSize: UInt16
    /// The forwarder's replies, kept for their TTL (at most the ``resolver``'s cache's
    /// ``ResolutionCache/Limits/maximumTTL``).
    let forwardCache: ForwardCache

    public init(resolver: CachingResolver, rules: Rules = Rules(), forwarder: (any DNSForwarder)? = nil,
                blockedAnswer: BlockedAnswer = .nxdomain, udpPayloadSize: UInt16 = 1232) {
        self.resolver = resolver
        liveRules = LiveRules(rules)
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
        switch IncomingMessage(wire: message) {
        case .drop:
            return nil
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
                    guard let failure = DNSAnswer(error) else { return nil }
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
    /// when no upstream answered; `nil` when the calling task was cancelled.
    private func forward(_ query: DNSQuery, to forwarder: any DNSForwarder, over transport: DNSTransport) async -> [UInt8]? {
        let limit = transport.responseLimit(for: query.header, udpPayloadSize: udpPayloadSize)
        // The name is as ldns wrote it when it read the query, so ldns reads it again (out of memory aside).
        guard let question = ForwardedQuestion(name: query.question.name, type: query.question.type.rawValue) else {
            return write(.servfail, query.header, query.question, transport)
        }
        if let (reply, age) = forwardCache.reply(for: question),
           let relayed = ResponseWriter.relay(reply, to: query, age: age, limit: limit, udpPayloadSize: udpPayloadSize) {
            return relayed
        }
        let reply: [UInt8]
        do throws(ResolutionError) {
            reply = try await forwarder.forward(question)
        } catch {
            guard let failure = DNSAnswer(error) else { return nil }
            return write(failure, query.header, query.question, transport)
        }
        // A reply that does not answer this question is neither relayed nor kept.
        guard let relayed = ResponseWriter.relay(reply, to: query, limit: limit, udpPayloadSize: udpPayloadSize) else {
            return write(.servfail, query.header, query.question, transport)
        }
        forwardCache.store(reply, for: question)
        return relayed
    }

    private func write(_ answer: DNSAnswer, _ header: DNSRequestHeader, _ question: DNSQuestion?,
                       _ transport: DNSTransport) -> [UInt8]? {
        let limit = transport.responseLimit(for: header, udpPayloadSize: udpPayloadSize)
        return ResponseWriter.write(answer, to: header, question: question, limit: limit, udpPayloadSize: udpPayloadSize)
            // ldns could not write it (out of memory, an odd CNAME target): the client may ask elsewhere.
            ?? ResponseWriter.write(.servfail, to: header, question: question, limit: limit, udpPayloadSize: udpPayloadSize)
    }
}
