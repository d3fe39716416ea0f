/// A strict HTTP/1.1 request-head parser (RFC 9112), written for HostPin because Debian 12 packages no
/// maintained one: nodejs's http-parser is archived and llhttp is not packaged.
///
/// "Strict" means it rejects what RFC 9112 lets or tells a recipient reject, and everything on which two
/// implementations could disagree about where a message ends (request smuggling): bare CR and bare LF,
/// obsolete line folding, whitespace before a field's colon, control characters in values, conflicting
/// `Content-Length`, `Transfer-Encoding` together with `Content-Length` or in HTTP/1.0, a final coding
/// other than chunked, a missing or repeated `Host`, and heads beyond ``HeadLimits``. Each problem is one
/// ``HeadError`` case.
public struct RequestHeadParser: Sendable {
    /// The size limits applied.
    public let limits: HeadLimits

    /// A parser with `limits`.
    public init(limits: HeadLimits = HeadLimits()) {
        self.limits = limits
    }

    /// Parses a complete head: the request line, the field lines and the empty line ending it.
    ///
    /// - Parameter head: Exactly the head's bytes, CRLF CRLF included.
    /// - Throws: ``HeadError`` naming the first problem.
    public func parse(_ head: some Collection<UInt8>) throws(HeadError) -> RequestHead {
        try parse(head, knownAuthority: nil)
    }

    /// ``parse(_:)``, taking an absolute-form target's authority as `knownAuthority` when it is written
    /// as that authority was (a keep-alive connection's next request to the same origin), instead of
    /// parsing it again.
    func parse(_ head: some Collection<UInt8>, knownAuthority: RequestTarget.Authority?) throws(HeadError) -> RequestHead {
        let bytes = Array(head)
        guard let end = try HeadSyntax.endOfHead(in: bytes, limits: limits), end == bytes.count else {
            throw .malformedRequestLine
        }
        let lines = try HeadSyntax.lines(of: bytes[...])
        guard let requestLine = lines.first, !requestLine.isEmpty else { throw .malformedRequestLine }
        let parts = HeadSyntax.startLineParts(requestLine)
        guard let targetBytes = parts.second, let versionBytes = parts.third, !targetBytes.isEmpty else {
            throw .malformedRequestLine
        }
        guard HeadSyntax.isToken(parts.first) else { throw .invalidMethod }
        if versionBytes.contains(HeadSyntax.space) { throw .malformedRequestLine }
        let version = try HeadSyntax.version(versionBytes)
        let method = String(decoding: parts.first, as: UTF8.self)
        let targetText = String(decoding: targetBytes, as: UTF8.self)
        let target = try RequestTarget.parse(targetText, method: method, known: knownAuthority)
        let fields = try HeadSyntax.fields(lines.dropFirst())
        let hosts = fields.values("Host")
        if hosts.count > 1 { throw .duplicateHost }
        if hosts.isEmpty && version == .http11 { throw .missingHost }
        let framing = try BodyFraming.of(fields, version: version, absent: .none)
        return RequestHead(method: method, target: target, targetText: targetText, version: version,
                           fields: fields, framing: framing, bytes: bytes)
    }
}
