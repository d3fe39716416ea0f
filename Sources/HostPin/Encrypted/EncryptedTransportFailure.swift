/// Why one exchange with an encrypted upstream produced no reply. Each case is a distinct reason the
/// caller can act on (fail over, report, hold the upstream down); each description is a sentence.
public enum EncryptedTransportFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// No reply within the exchange's timeout (connecting included).
    case timeout
    /// The calling task was cancelled.
    case cancelled
    /// The transport was shut down before the reply.
    case transportClosed
    /// The query is no DNS message that can be sent: shorter than a header (12 octets) or longer than
    /// 65 535 octets (RFC 1035 §4.1.1; RFC 7766 §8's length prefix and RFC 8484 §6 cap both at 65 535).
    case badQuery(octets: Int)
    /// The upstream's NAME is a host name and no bootstrap address says where it is; nothing was sent.
    case noBootstrapAddress(HostName)
    /// No TCP connection could be made to any bootstrap address (refused, unreachable).
    case connectFailed(String)
    /// The server's certificate chain does not lead to a trusted CA (or is expired, or malformed):
    /// libcurl's message, which names the X.509 verification error.
    case untrustedCertificate(String)
    /// The certificate is trusted but does not name the upstream's NAME (RFC 6125 §6).
    case certificateNameMismatch(String)
    /// The server's public key matches none of the upstream's pins (RFC 7858 §4.2).
    case pinMismatch
    /// Another TLS failure: no common protocol version or cipher, an alert, an unreadable CA file.
    case tlsFailed(String)
    /// DoH: the HTTP status was not 200 (RFC 8484 §4.2.1).
    case httpStatus(Int)
    /// DoH: the reply's content type was not `application/dns-message` (RFC 8484 §6); `nil` when absent.
    case wrongContentType(String?)
    /// The reply is longer than a DNS message can be, 65 535 octets; reading stopped there.
    case replyTooLong
    /// The reply is shorter than a DNS header, 12 octets (RFC 1035 §4.1.1).
    case replyTooShort(octets: Int)
    /// The reply ended before the length it announced: DoH, a body shorter than its `Content-Length`;
    /// DoT, the connection closed inside a length-prefixed message.
    case replyCutShort
    /// The server closed or reset the connection before replying.
    case connectionClosed
    /// DoT: the server stopped inside a reply (a length prefix or message begun, then nothing until
    /// this query's deadline); HostPin dropped the connection, since nothing behind that reply can
    /// arrive, and failed what was in flight on it.
    case connectionStalled
    /// Any other libcurl failure: its code and message.
    case transferFailed(code: Int, message: String)

    public var description: String {
        switch self {
        case .timeout: "the upstream did not reply in time"
        case .cancelled: "the query was cancelled"
        case .transportClosed: "the transport to the upstream was shut down"
        case .badQuery(let octets): "the query is \(octets) octets long; a DNS message has 12 to 65 535"
        case .noBootstrapAddress(let name): "no bootstrap address says where \(name) is, so nothing was sent"
        case .connectFailed(let message): "could not connect to the upstream: \(message)"
        case .untrustedCertificate(let message): "the upstream's certificate is not trusted: \(message)"
        case .certificateNameMismatch(let message): "the upstream's certificate is for another name: \(message)"
        case .pinMismatch: "the upstream's public key matches none of its pins"
        case .tlsFailed(let message): "the TLS handshake with the upstream failed: \(message)"
        case .httpStatus(let status): "the upstream answered HTTP status \(status), not 200"
        case .wrongContentType(let type):
            "the upstream's reply is \(type.map { "of type '\($0)'" } ?? "without a content type"), not application/dns-message"
        case .replyTooLong: "the upstream's reply is longer than 65 535 octets, more than a DNS message can be"
        case .replyTooShort(let octets): "the upstream's reply is \(octets) octets long, shorter than a DNS header (12)"
        case .replyCutShort: "the upstream's reply ended before the length it announced"
        case .connectionClosed: "the upstream closed the connection before replying"
        case .connectionStalled: "the upstream stopped in the middle of a reply, so the connection was dropped"
        case .transferFailed(let code, let message): "the exchange with the upstream failed: \(message) (libcurl error \(code))"
        }
    }
}
