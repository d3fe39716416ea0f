extension Upstream {
    /// The transport that carries this upstream's queries: a c-ares channel (``AresChannel``) for plain
    /// DNS, the DoH or DoT transport (``EncryptedUpstreamTransport``) for an encrypted upstream. Nothing
    /// is connected yet.
    ///
    /// - Parameters:
    ///   - timeout: c-ares's first per-try timeout, doubled on each retry.
    ///   - tries: c-ares's attempts per query. An encrypted exchange is one attempt (its connection
    ///     already retransmits) given the time all of c-ares's tries would take:
    ///     `timeout × (2^tries − 1)`, 3 s for the defaults.
    ///   - useTCP: Plain DNS over TCP only; encrypted transports always run over TCP.
    /// - Throws: ``ResolutionError/setupFailed(_:)`` when c-ares cannot create a channel.
    func makeTransport(timeout: Duration, tries: Int, useTCP: Bool) throws(ResolutionError) -> any UpstreamTransport {
        switch kind {
        case .plain(let address, let port):
            return try AresChannel(server: (address, port), timeout: timeout, tries: tries, useTCP: useTCP)
        case .encrypted(let encrypted):
            // 2^tries − 1 per-try timeouts; 2^16 − 1 at most, far past any budget.
            let spans = (1 << min(max(tries, 1), 16)) - 1
            return EncryptedUpstreamTransport(encrypted.makeTransport(), timeout: timeout * spans)
        }
    }
}
