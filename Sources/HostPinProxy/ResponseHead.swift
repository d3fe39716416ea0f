/// A parsed response head from an origin: status line and field lines (RFC 9112 §4, §5).
struct ResponseHead: Sendable, Hashable {
    /// The origin's version.
    let version: HTTPVersion
    /// The status code, 100-999.
    let status: Int
    /// The reason phrase, possibly empty.
    let reason: String
    /// The field lines, in order, in the head's own bytes (forwarded from there, not from strings).
    let lines: FieldLines
    /// The fields the proxy reads itself: ``controlFieldNames``.
    let controlFields: HeaderFields

    /// The fields that decide the body's framing and the connection's fate (RFC 9112 §6.3, §9.3): the
    /// only ones made into strings. Lower-case bytes, for ``FieldLines/strings(named:)``.
    static let controlFieldNames = ["connection", "content-length", "transfer-encoding"].map { Array($0.utf8) }

    /// Parses a complete response head.
    ///
    /// - Throws: ``HeadError``; the proxy answers any of them with 502.
    static func parse(_ head: [UInt8], limits: HeadLimits) throws(HeadError) -> ResponseHead {
        guard let cr = head.firstIndex(where: { $0 == HeadSyntax.cr || $0 == HeadSyntax.lf }) else { throw .malformedStatusLine }
        if head[cr] == HeadSyntax.lf { throw .bareLF }
        guard cr + 1 < head.count, head[cr + 1] == HeadSyntax.lf else { throw .bareCR }
        let statusLine = head[..<cr]
        if statusLine.isEmpty { throw .malformedStatusLine }
        let parts = HeadSyntax.startLineParts(statusLine)
        guard let code = parts.second, code.count == 3, code.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw .malformedStatusLine
        }
        let status = code.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        guard status >= 100 else { throw .malformedStatusLine }
        let version: HTTPVersion
        do throws(HeadError) {
            version = try HeadSyntax.version(parts.first)
        } catch {
            throw .malformedStatusLine
        }
        let reason = parts.third.map { String(decoding: $0, as: UTF8.self) } ?? ""
        guard reason.utf8.allSatisfy(HeadSyntax.isFieldValueCharacter) else { throw .malformedStatusLine }
        let lines = try FieldLines(head, from: cr + 2)
        return ResponseHead(version: version, status: status, reason: reason, lines: lines,
                            controlFields: lines.strings(named: Self.controlFieldNames))
    }

    /// How this response's body is delimited, given the request's method (RFC 9112 §6.3, items 1-7).
    func framing(requestMethod: String) throws(HeadError) -> BodyFraming {
        if requestMethod == "HEAD" || status < 200 || status == 204 || status == 304 { return .none }
        return try BodyFraming.of(controlFields, version: version, absent: .untilClose)
    }
}
