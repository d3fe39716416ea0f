/// Why a resolution failed. Closed: every consumer (CLI exit codes, `URLError`, proxy status) maps each
/// case, so a new case is a compile error there, not a silent default.
public enum ResolutionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The name does not exist: NXDOMAIN, RCODE 3 (RFC 1035 §4.1.1, RFC 2308 §2.1).
    case nxdomain(HostName)
    /// The name exists but has no address of the family asked for: NODATA (RFC 2308 §2.2).
    case nodata(HostName, AddressFamily)
    /// The text is not a valid host name.
    case badName(String, HostNameProblem)
    /// No trusted upstream is configured.
    case noUpstreams
    /// Every upstream tried failed (timeout, SERVFAIL, REFUSED, a TLS failure, …); one entry per upstream,
    /// in order tried.
    case upstreamsFailed([UpstreamFailure])
    /// The resolution's total time budget ran out before any upstream answered.
    case timeout(budget: Duration, [UpstreamFailure])
    /// The calling task was cancelled.
    case cancelled
    /// A c-ares channel could not be set up (out of memory, no sockets); the c-ares message.
    case setupFailed(String)
    /// DNSSEC validation (``DNSSECMode/validate``) found no trusted upstream's answer valid: the reason
    /// from the first upstream whose answer was bogus — which RRset, which key, what was wrong
    /// (RFC 4035 §5). Every upstream's failure is in the reason's upstream list.
    case dnssecBogus(BogusReason, [UpstreamFailure])

    public var description: String {
        switch self {
        case .nxdomain(let name): "\(name): NXDOMAIN (the name does not exist)"
        case .nodata(let name, let family):
            "\(name): NODATA (the name exists but has no \(family == .v4 ? "IPv4 (A)" : family == .v6 ? "IPv6 (AAAA)" : "A or AAAA") record)"
        case .badName(let text, let problem): "'\(text)' is not a valid host name: \(problem)"
        case .noUpstreams: "no trusted upstream DNS server is configured"
        case .upstreamsFailed(let failures):
            "no trusted upstream answered: " + failures.map(\.description).joined(separator: "; ")
        case .timeout(let budget, let failures):
            "no trusted upstream answered within \(budget.formattedSeconds)"
                + (failures.isEmpty ? "" : " (" + failures.map(\.description).joined(separator: "; ") + ")")
        case .cancelled: "the resolution was cancelled"
        case .setupFailed(let reason): "the DNS resolver could not be set up: \(reason)"
        case .dnssecBogus(let reason, _): "DNSSEC validation failed (bogus): \(reason)"
        }
    }
}

/// What went wrong at one upstream.
public struct UpstreamFailure: Sendable, Hashable, CustomStringConvertible {
    /// The failure, in DNS terms.
    public enum Reason: Sendable, Hashable, CustomStringConvertible {
        /// No answer within the per-try timeout, after every try.
        case timeout
        /// RCODE 2, SERVFAIL (RFC 1035 §4.1.1).
        case servfail
        /// RCODE 5, REFUSED (RFC 1035 §4.1.1).
        case refused
        /// The upstream's port refused: ICMP port unreachable, a TCP reset, or a TCP connection closed
        /// before the answer (c-ares `ARES_ECONNREFUSED`).
        case unreachable
        /// The reply is not a well-formed response to the query (RFC 1035 §4.1.1): it cannot be parsed,
        /// its QR bit is clear, it answers another question, it is truncated although it came over TCP, or
        /// its RCODE is none of NOERROR, NXDOMAIN, SERVFAIL and REFUSED (FORMERR, NOTIMP, an unassigned one).
        case badResponse
        /// Any other c-ares status: its code and message.
        case other(code: Int32, message: String)
        /// An encrypted upstream (DoH, DoT) gave no reply: the TLS handshake failed (an untrusted
        /// certificate, one for another name, a key matching none of the pins), the connection could not be
        /// made or broke, DoH answered an HTTP status other than 200 or another content type, the reply's
        /// length was impossible. A timeout is ``timeout``, a reply that is not a well-formed response to
        /// the query ``badResponse``, as for plain DNS.
        case encrypted(EncryptedTransportFailure)
        /// The opted-in untrusted fallback answered with addresses its ``HijackDetector`` calls hijacked
        /// (a known hijack address, a special-purpose address); the answer was not handed out.
        case hijackedAnswer([HijackReason])
        /// Its answer failed DNSSEC validation (bogus, RFC 4035 §5): which RRset, which key, what was wrong.
        /// The next upstream is asked; the answer is not handed out.
        case dnssecBogus(BogusReason)

        public var description: String {
            switch self {
            case .timeout: "timeout"
            case .servfail: "SERVFAIL"
            case .refused: "REFUSED"
            case .unreachable: "connection refused (port unreachable, or the connection was closed)"
            case .badResponse: "malformed answer"
            case .other(let code, let message): "\(message) (c-ares status \(code))"
            case .encrypted(let failure): failure.description
            case .hijackedAnswer(let reasons):
                "its answer looks hijacked, so it was refused (" + reasons.map(\.description).joined(separator: "; ") + ")"
            case .dnssecBogus(let reason): "DNSSEC bogus: \(reason)"
            }
        }
    }

    /// The upstream that failed.
    public let upstream: Upstream
    /// How it failed.
    public let reason: Reason

    public init(upstream: Upstream, reason: Reason) {
        self.upstream = upstream
        self.reason = reason
    }

    public var description: String { "\(upstream): \(reason)" }
}

extension Duration {
    /// `1.5 s`, `300 ms`: a duration as people write it.
    var formattedSeconds: String {
        let millis = components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
        return millis % 1000 == 0 ? "\(millis / 1000) s" : millis >= 1000 ? "\(Double(millis) / 1000) s" : "\(millis) ms"
    }
}
