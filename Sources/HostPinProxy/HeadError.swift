/// Why a message head (request or response) is not valid HTTP/1.1 (RFC 9112). Closed: each case has one
/// status code and one sentence, and the parser's table tests name the exact case.
public enum HeadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A CR not followed by LF (RFC 9112 §2.2: a recipient must treat it as invalid).
    case bareCR
    /// An LF not preceded by CR. RFC 9112 §2.2 lets a recipient accept it; HostPin does not, since a
    /// proxy that accepts a framing the origin reads differently enables request smuggling.
    case bareLF
    /// A field line starting with a space or tab: obsolete line folding (RFC 9112 §5.2).
    case obsoleteLineFolding
    /// The request line is not `method SP request-target SP HTTP-version` (RFC 9112 §3).
    case malformedRequestLine
    /// The method is not a token (RFC 9110 §9.1).
    case invalidMethod
    /// The request-target is none of the four forms, or its host or port is invalid (RFC 9112 §3.2).
    case invalidTarget(String)
    /// The version is `HTTP/2.0` or above (or `HTTP/0.x`): well formed but not spoken here (RFC 9110
    /// §15.6.6: 505). A later HTTP/1.x, such as `HTTP/1.2`, is read as HTTP/1.1 (RFC 9110 §2.5).
    case unsupportedVersion(String)
    /// The status line of a response is not `HTTP-version SP 3DIGIT SP reason` (RFC 9112 §4).
    case malformedStatusLine
    /// A field line has no colon.
    case missingColon
    /// Whitespace between a field name and its colon (RFC 9112 §5.1: must be rejected with 400).
    case whitespaceBeforeColon
    /// A field name is empty or not a token (RFC 9110 §5.1).
    case invalidFieldName
    /// A field value holds a control character other than tab (RFC 9110 §5.5).
    case invalidFieldValue(name: String)
    /// An HTTP/1.1 request without `Host` (RFC 9112 §3.2: 400).
    case missingHost
    /// More than one `Host` field line (RFC 9112 §3.2: 400).
    case duplicateHost
    /// A `Content-Length` value that is not a decimal number (RFC 9110 §8.6).
    case invalidContentLength(String)
    /// A `Content-Length` value that is a decimal number of more than 18 digits: too large to be held
    /// (RFC 9110 §8.6 asks a recipient to anticipate large numbers and refuse what would overflow).
    case contentLengthTooLarge(String)
    /// `Content-Length` lines or list members that differ (RFC 9112 §6.3, item 5).
    case conflictingContentLength
    /// `Content-Length` given more than once with the same value, on several lines or as a list
    /// (`5, 5`). RFC 9110 §8.6 lets a recipient either refuse it or replace it with one field before
    /// forwarding; HostPin refuses it (400; 502 from an origin), as nginx does, so no recipient behind it
    /// ever sees the repeated field. The values as listed.
    case repeatedContentLength(String)
    /// Both `Transfer-Encoding` and `Content-Length` (RFC 9112 §6.1: request smuggling risk; rejected).
    case transferEncodingWithContentLength
    /// `Transfer-Encoding` whose final coding is not `chunked` (RFC 9112 §6.3, item 4: 400).
    case chunkedNotFinal
    /// `chunked` more than once among the transfer codings (on one line or repeated lines), e.g.
    /// `chunked, chunked`: RFC 9112 §6.1 forbids applying it twice, so the framing is malformed (400). The
    /// codings as listed.
    case chunkedRepeated(String)
    /// `chunked` with a parameter (`chunked;param`): RFC 9112 §7 defines none for it, and their presence
    /// is an error (400). The codings as listed.
    case chunkedWithParameter(String)
    /// `Transfer-Encoding` in an HTTP/1.0 message: the framing is faulty (RFC 9112 §6.1).
    case transferEncodingInHTTP10
    /// A transfer coding other than `chunked` before it, e.g. `gzip, chunked` (RFC 9112 §6.1: 501).
    case unsupportedTransferCoding(String)
    /// The request line is longer than the limit (RFC 9112 §3: 414).
    case requestLineTooLong(limit: Int)
    /// One field line is longer than the limit (RFC 6585 §5: 431).
    case fieldLineTooLong(limit: Int)
    /// More field lines than the limit (RFC 6585 §5: 431).
    case tooManyFields(limit: Int)
    /// The whole head is larger than the limit (RFC 6585 §5: 431).
    case headTooLarge(limit: Int)

    /// The status a proxy answers a request with this problem with.
    public var status: Int {
        switch self {
        case .requestLineTooLong: 414
        case .fieldLineTooLong, .tooManyFields, .headTooLarge: 431
        case .unsupportedTransferCoding: 501
        case .unsupportedVersion: 505
        default: 400
        }
    }

    public var description: String {
        switch self {
        case .bareCR: "a CR is not followed by LF"
        case .bareLF: "a line ends in a bare LF instead of CRLF"
        case .obsoleteLineFolding: "a field line starts with whitespace (obsolete line folding)"
        case .malformedRequestLine: "the request line is not 'METHOD SP TARGET SP HTTP/1.1'"
        case .invalidMethod: "the method is not a token"
        case .invalidTarget(let reason): "the request target is invalid: \(reason)"
        case .unsupportedVersion(let version): "HTTP version '\(version)' is not supported (HTTP/1.0 and HTTP/1.1 are)"
        case .malformedStatusLine: "the status line is not 'HTTP/1.1 SP CODE SP REASON'"
        case .missingColon: "a field line has no colon"
        case .whitespaceBeforeColon: "a field name is followed by whitespace before the colon"
        case .invalidFieldName: "a field name is empty or not a token"
        case .invalidFieldValue(let name): "field '\(name)' holds a control character"
        case .missingHost: "an HTTP/1.1 request has no Host field"
        case .duplicateHost: "the request has more than one Host field"
        case .invalidContentLength(let value): "Content-Length '\(value)' is not a decimal number"
        case .contentLengthTooLarge(let value): "Content-Length '\(value)' is too large (more than 18 digits)"
        case .conflictingContentLength: "the Content-Length values differ"
        case .repeatedContentLength(let values): "Content-Length is given more than once (\(values)); a message has one length"
        case .transferEncodingWithContentLength: "the message has both Transfer-Encoding and Content-Length"
        case .chunkedNotFinal: "chunked is not the final transfer coding"
        case .chunkedRepeated(let codings): "chunked is applied more than once (Transfer-Encoding: \(codings))"
        case .chunkedWithParameter(let codings): "the chunked transfer coding takes no parameters (Transfer-Encoding: \(codings))"
        case .transferEncodingInHTTP10: "an HTTP/1.0 message has a Transfer-Encoding field"
        case .unsupportedTransferCoding(let coding): "transfer coding '\(coding)' is not supported (only chunked is)"
        case .requestLineTooLong(let limit): "the request line is longer than \(limit) bytes"
        case .fieldLineTooLong(let limit): "a field line is longer than \(limit) bytes"
        case .tooManyFields(let limit): "the head has more than \(limit) field lines"
        case .headTooLarge(let limit): "the head is larger than \(limit) bytes"
        }
    }
}
