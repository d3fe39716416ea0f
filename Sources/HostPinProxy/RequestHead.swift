/// A parsed request head: request line and field lines (RFC 9112 §3, §5), with its body framing.
public struct RequestHead: Sendable, Hashable {
    /// The method, case-sensitive (RFC 9110 §9.1): `GET`, `CONNECT`, …
    public let method: String
    /// The request-target, parsed.
    public let target: RequestTarget
    /// The request-target as received, for the access log.
    public let targetText: String
    /// `HTTP/1.0` or `HTTP/1.1`.
    public let version: HTTPVersion
    /// The field lines, in order.
    public let fields: HeaderFields
    /// How the body is delimited.
    public let framing: BodyFraming
    /// The head exactly as received (CRLF CRLF included), which the parser checked: the forwarded head's
    /// field lines are copied from it (``ForwardedHead``), not rebuilt from ``fields``' strings.
    let bytes: [UInt8]

    /// Whether the client wants the connection kept open after the response: HTTP/1.1 unless
    /// `Connection: close` (RFC 9112 §9.3). HTTP/1.0 keep-alive is not offered: those connections close.
    public var wantsKeepAlive: Bool {
        version == .http11 && !fields.contains("Connection", token: "close")
    }
}

extension RequestHead {
    /// Equal when the parsed parts are: ``bytes`` is where they were read from, and two heads that differ
    /// only in optional whitespace mean the same request (the fuzzer's parse, write, parse property).
    public static func == (lhs: RequestHead, rhs: RequestHead) -> Bool {
        lhs.method == rhs.method && lhs.target == rhs.target && lhs.targetText == rhs.targetText
            && lhs.version == rhs.version && lhs.fields == rhs.fields && lhs.framing == rhs.framing
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(method)
        hasher.combine(target)
        hasher.combine(targetText)
        hasher.combine(version)
        hasher.combine(fields)
        hasher.combine(framing)
    }
}
