import HostPin

/// Where the stub sends the queries it does not answer from the trusted cache (MX, TXT, SRV,
/// HTTPS/SVCB, PTR, … and names that are not host names): the trusted upstreams.
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
}

extension TrustedResolver: DNSForwarder {}
