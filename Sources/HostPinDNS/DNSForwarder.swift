/// Where the stub sends the queries it does not answer from the trusted cache (MX, TXT, SRV,
/// HTTPS/SVCB, PTR, … and names that are not host names): a transport to the trusted upstreams.
///
/// HostPin's resolver asks for A and AAAA only, so no implementation ships yet; until one is plugged
/// in, those queries are answered REFUSED. An implementation must send the query to the trusted
/// upstreams only, never to the system's resolver, and must be safe to call from many tasks at once.
public protocol DNSForwarder: Sendable {
    /// Sends `query` (the client's message as received, ID included) to a trusted upstream.
    ///
    /// - Returns: The upstream's whole response message, whatever its RCODE; `nil` when no upstream
    ///   answered (the client then gets SERVFAIL). The stub keeps the RCODE and the records and writes
    ///   them under the client's own ID, question and size limit.
    func forward(_ query: [UInt8]) async -> [UInt8]?
}
