import Foundation
import HostPin

/// The stub's answers, without sockets: one DNS message in, its response out.
///
/// A query is read (``IncomingMessage``), planned from the rules (``QueryPlan``), resolved through the
/// ``CachingResolver`` when it asks for A or AAAA, and written back (``ResponseWriter``), all with ldns.
/// The ``DNSServer`` wraps it in UDP and TCP sockets; tests and other servers can call it directly.
public struct DNSResponder: Sendable {
    /// The trusted cache every A and AAAA query goes through; its TTL limits bound the TTLs given out.
    public let resolver: CachingResolver
    /// The rules: `block` and `pin` decide a name's answer before any resolution.
    public let rules: Rules
    /// Where other record types go; `nil` (today's only choice in the CLI) answers them REFUSED.
    public let forwarder: (any DNSForwarder)?
    /// How a blocked name is answered. Default: NXDOMAIN.
    public let blockedAnswer: BlockedAnswer
    /// The UDP payload size advertised in responses and the most a UDP response holds, in octets.
    /// Default: 1232, the size that avoids IP fragmentation (RFC 6891 §6.2.5; DNS Flag Day 2020).
    public let udpPayloadSize: UInt16

    public init(resolver: CachingResolver, rules: Rules = Rules(), forwarder: (any DNSForwarder)? = nil,
                blockedAnswer: BlockedAnswer = .nxdomain, udpPayloadSize: UInt16 = 1232) {
        self.resolver = resolver
        self.rules = rules
        self.forwarder = forwarder
        self.blockedAnswer = blockedAnswer
        self.udpPayloadSize = max(512, udpPayloadSize)
    }

    /// The response to `message`.
    ///
    /// - Parameters:
    ///   - message: One DNS message as received (for TCP, without its length prefix).
    ///   - transport: How it came, which bounds the response's size (``DNSTransport``).
    /// - Returns: The response, or `nil` when the message gets none: shorter than a header, a response
    ///   itself (QR set), or the calling task was cancelled while its name was being resolved.
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
                    let resolution = try await resolver.resolve(name, family: family)
                    answer = DNSAnswer(resolution, now: Date(), limits: resolver.cache.limits)
                } catch {
                    guard let failure = DNSAnswer(error) else { return nil }
                    answer = failure
                }
                return write(answer, query.header, query.question, transport)
            case .forward:
                guard let forwarder else { return write(.refused, query.header, query.question, transport) }
                let limit = transport.responseLimit(for: query.header, udpPayloadSize: udpPayloadSize)
                if let reply = await forwarder.forward(message),
                   let relayed = ResponseWriter.relay(reply, to: query, limit: limit, udpPayloadSize: udpPayloadSize) {
                    return relayed
                }
                return write(.servfail, query.header, query.question, transport)
            }
        }
    }

    private func write(_ answer: DNSAnswer, _ header: DNSRequestHeader, _ question: DNSQuestion?,
                       _ transport: DNSTransport) -> [UInt8]? {
        let limit = transport.responseLimit(for: header, udpPayloadSize: udpPayloadSize)
        return ResponseWriter.write(answer, to: header, question: question, limit: limit, udpPayloadSize: udpPayloadSize)
            // ldns could not write it (out of memory, an odd CNAME target): the client may ask elsewhere.
            ?? ResponseWriter.write(.servfail, to: header, question: question, limit: limit, udpPayloadSize: udpPayloadSize)
    }
}
