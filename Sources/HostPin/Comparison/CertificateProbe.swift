import CCurl

/// The HTTPS probe: a TLS handshake with each address on one port, the certificate verified against the
/// compared name as any client would (chain to a trusted CA, name per RFC 6125 §6; verification is
/// never turned off). A hijacker's address usually serves a certificate for another name, or none.
///
/// Each handshake is libcurl's (`CURLOPT_CONNECT_ONLY`: it stops once TLS is up, no request is sent),
/// set up as the encrypted upstreams' are (``UpstreamCurlHandle``: the name kept in the URL for SNI and
/// the check, `CURLOPT_RESOLVE` to the address probed, no proxy, the extra CA file beside the system's),
/// on a thread of its own (one of ``CurlThreads``: a probe stopped at exit fails with `.cancelled`).
public struct CertificateProbe: Sendable, Hashable {
    /// How the handshake with one address ended.
    public enum Outcome: Sendable, Hashable {
        /// The certificate is valid for the name.
        case valid
        /// The handshake reached the certificate and it is not valid for the name: another name
        /// (``EncryptedTransportFailure/certificateNameMismatch(_:)``) or no trusted chain
        /// (``EncryptedTransportFailure/untrustedCertificate(_:)``).
        case invalid(EncryptedTransportFailure)
        /// No certificate to judge: no connection, no TLS there, a timeout.
        case failed(EncryptedTransportFailure)
    }

    /// One address probed.
    public struct Check: Sendable, Hashable {
        public let address: IPAddress
        public let outcome: Outcome

        public init(address: IPAddress, outcome: Outcome) {
            self.address = address
            self.outcome = outcome
        }
    }

    /// The TCP port probed.
    public let port: UInt16
    /// The local answer's addresses probed, in answer order.
    public let local: [Check]
    /// The trusted answer's addresses probed, in answer order.
    public let trusted: [Check]

    public init(port: UInt16, local: [Check], trusted: [Check]) {
        self.port = port
        self.local = local
        self.trusted = trusted
    }

    /// The most addresses of one side probed: enough for any real answer's variety.
    public static let maximumAddressesPerSide = 4

    /// Probes the first ``maximumAddressesPerSide`` of `local` and of `trusted` on `port`, all at once.
    ///
    /// - Parameters:
    ///   - name: The name the certificates must be valid for (not an IP literal).
    ///   - port: The HTTPS port, 443 for `https` (RFC 9110 §4.2.2).
    ///   - caFile: A PEM file of CA certificates trusted besides the system's.
    ///   - timeout: The most one handshake may take, connecting included.
    public static func run(name: HostName, port: UInt16, local: [IPAddress], trusted: [IPAddress], caFile: String?,
                           timeout: Duration) async -> CertificateProbe {
        async let localChecks = checks(name, port, Array(local.prefix(maximumAddressesPerSide)), caFile, timeout)
        async let trustedChecks = checks(name, port, Array(trusted.prefix(maximumAddressesPerSide)), caFile, timeout)
        return CertificateProbe(port: port, local: await localChecks, trusted: await trustedChecks)
    }

    private static func checks(_ name: HostName, _ port: UInt16, _ addresses: [IPAddress], _ caFile: String?,
                               _ timeout: Duration) async -> [Check] {
        await withTaskGroup(of: (Int, Check).self) { group in
            for (index, address) in addresses.enumerated() {
                group.addTask {
                    let outcome = await withCheckedContinuation { continuation in
                        let transfer = StoppableTransfer()
                        let started = CurlThreads.process.start(name: "hostpin-probe", stop: { transfer.stop() }) {
                            continuation.resume(returning: handshake(name, address, port, caFile, timeout, transfer))
                        }
                        if !started { continuation.resume(returning: .failed(.transportClosed)) }
                    }
                    return (index, Check(address: address, outcome: outcome))
                }
            }
            var checks: [(Int, Check)] = []
            for await check in group { checks.append(check) }
            return checks.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }

    /// One handshake, waited for; runs on a thread of its own, which `transfer`'s stop ends early.
    private static func handshake(_ name: HostName, _ address: IPAddress, _ port: UInt16, _ caFile: String?,
                                  _ timeout: Duration, _ transfer: StoppableTransfer) -> Outcome {
        timedHandshake(name, address, port, caFile, timeout, transfer).outcome
    }

    /// One handshake with `address` on `port`, the certificate verified for `name`, waited for on the
    /// calling thread (a thread of its own, never Swift's pool); `transfer`'s stop ends it early.
    ///
    /// - Returns: How it ended and, when the certificate was valid, how long the connection took to be
    ///   usable: TCP and TLS up, the certificate verified (`CURLINFO_APPCONNECT_TIME_T`, less the
    ///   `CURLOPT_RESOLVE` look-up's `CURLINFO_NAMELOOKUP_TIME_T`).
    static func timedHandshake(_ name: HostName, _ address: IPAddress, _ port: UInt16, _ caFile: String?,
                               _ timeout: Duration, _ transfer: StoppableTransfer) -> (outcome: Outcome, time: Duration?) {
        var server = EncryptedUpstream(transport: .https(path: "/"), name: name, port: port)
        server.bootstrap = [address]
        server.extraCAFile = caFile
        guard let curl = UpstreamCurlHandle(upstream: server, url: "https://\(name.text):\(port)/") else {
            return (.failed(.transferFailed(code: Int(CURLE_OUT_OF_MEMORY.rawValue), message: "libcurl could not create a handle")), nil)
        }
        defer { curl.close() }
        curl.set(CURLOPT_CONNECT_ONLY, 1)
        curl.set(CURLOPT_TIMEOUT_MS, max(1, timeout.millisecondsRoundedUp))  // 0 would mean "no timeout"
        guard curl.setupResult == CURLE_OK else { return (.failed(curl.failure(curl.setupResult)), nil) }
        guard let code = transfer.perform(curl.raw) else { return (.failed(.cancelled), nil) }
        guard code != CURLE_OK else {
            var connected: curl_off_t = 0
            var lookup: curl_off_t = 0
            guard hostpin_curl_getinfo_offset(curl.raw, CURLINFO_APPCONNECT_TIME_T, &connected) == CURLE_OK else {
                return (.valid, nil)
            }
            _ = hostpin_curl_getinfo_offset(curl.raw, CURLINFO_NAMELOOKUP_TIME_T, &lookup)
            return (.valid, .microseconds(max(0, connected - lookup)))
        }
        let failure = curl.failure(code)
        switch failure {
        case .certificateNameMismatch, .untrustedCertificate:
            return (.invalid(failure), nil)
        case .timeout, .cancelled, .transportClosed, .badQuery, .noBootstrapAddress, .connectFailed, .pinMismatch,
             .tlsFailed, .httpStatus, .wrongContentType, .replyTooLong, .replyTooShort, .replyCutShort,
             .connectionClosed, .connectionStalled, .transferFailed:
            return (.failed(failure), nil)
        }
    }
}
