import HostPin

/// Where the stub sends the queries it does not answer from the trusted cache (MX, TXT, SRV,
/// HTTPS/SVCB, PTR, … and names that are not host names; with validation on, also A and AAAA queries
/// with DO or CD): the trusted upstreams.
///
/// ``TrustedResolver`` is one (``TrustedResolver/forward(_:)``): `hostpin serve` hands the stub the
/// resolver behind its cache. An implementation must ask the trusted upstreams only, never the system's
/// resolver, and must be safe to call from many tasks at once.
public protocol DNSForwarder: Sendable {
    /// Asks a trusted upstream `question` (class IN).
    ///
    /// - Returns: The upstream's whole response message, RCODE NOERROR or NXDOMAIN. The stub keeps the
    ///   RCODE and the records, writes them under the client's own ID, question and size limit, and
    ///   caches them for their TTL (``DNSResponder``).
    /// - Throws: ``ResolutionError``: ``ResolutionError/cancelled`` when the calling task was cancelled
    ///   (the client gets no answer), any other when no upstream answered (the client gets SERVFAIL).
    func forward(_ question: ForwardedQuestion) async throws(ResolutionError) -> [UInt8]

    /// Asks `question` as ``forward(_:)`` does, with what DNSSEC validation found for the reply.
    ///
    /// - Parameter checkingDisabled: The client set CD (RFC 4035 §3.2.2): the reply is not validated
    ///   (its status `nil`), a bogus one included.
    /// - Returns: The reply and its status. The default implementation validates nothing.
    /// - Throws: As ``forward(_:)``; ``ResolutionError/dnssecBogus(_:_:)`` when no upstream gave a valid
    ///   reply (``DNSSECMode/validate`` mode), which the stub answers SERVFAIL with an Extended DNS Error.
    func forwardValidated(_ question: ForwardedQuestion, checkingDisabled: Bool) async throws(ResolutionError)
        -> ForwardedAnswer

    /// Whether ``forwardValidated(_:checkingDisabled:)`` validates (``DNSSECMode/validate`` or
    /// ``DNSSECMode/report``): then the stub forwards A and AAAA queries with DO or CD too. Default: no.
    var validatesDNSSEC: Bool { get }
}

extension DNSForwarder {
    public func forwardValidated(_ question: ForwardedQuestion, checkingDisabled: Bool) async throws(ResolutionError)
        -> ForwardedAnswer
    {
        ForwardedAnswer(reply: try await forward(question))
    }

    public var validatesDNSSEC: Bool { false }
}

extension TrustedResolver: DNSForwarder {
    public var validatesDNSSEC: Bool { configuration.dnssec.mode != .off }
}
