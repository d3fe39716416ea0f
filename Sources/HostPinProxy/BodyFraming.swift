/// How a message's body is delimited (RFC 9112 §6.3).
public enum BodyFraming: Sendable, Hashable {
    /// No body: a request without `Content-Length` and `Transfer-Encoding`, or a response to HEAD,
    /// a 1xx, 204 or 304 response.
    case none
    /// Exactly this many bytes (`Content-Length`).
    case contentLength(UInt64)
    /// The chunked transfer coding (RFC 9112 §7.1).
    case chunked
    /// A response without either field: the body ends when the origin closes the connection.
    case untilClose

    /// The framing fields of `fields` as RFC 9112 §6.3 reads them, for a message of `version`.
    ///
    /// - Parameter absent: The framing when neither field is present: `.none` for requests,
    ///   `.untilClose` for responses.
    /// - Throws: ``HeadError``: invalid, conflicting or repeated `Content-Length` (identical values given
    ///   twice are refused, not merged: ``HeadError/repeatedContentLength(_:)``), both fields, a final coding
    ///   other than chunked, chunked with a parameter or applied twice, `Transfer-Encoding` in HTTP/1.0, or
    ///   an unsupported coding.
    static func of(_ fields: HeaderFields, version: HTTPVersion, absent: BodyFraming) throws(HeadError) -> BodyFraming {
        if let common = common(fields, absent: absent) { return common }
        return try general(fields, version: version, absent: absent)
    }

    /// ``of(_:version:absent:)`` for any fields: each rule of RFC 9112 §6.3 in turn.
    static func general(_ fields: HeaderFields, version: HTTPVersion, absent: BodyFraming) throws(HeadError) -> BodyFraming {
        let lengths = fields.values("Content-Length")
        if !fields.values("Transfer-Encoding").isEmpty {
            if version == .http10 { throw .transferEncodingInHTTP10 }
            if !lengths.isEmpty { throw .transferEncodingWithContentLength }
            let codings = fields.listMembers("Transfer-Encoding").map { $0.lowercased() }
            // A coding's name is what comes before its parameters (RFC 9110 §10.1.4: token *( OWS ";" OWS param )).
            let names = codings.map { $0.prefix { $0 != ";" }.trimmingWhitespace() }
            guard names.last == "chunked" else { throw .chunkedNotFinal }
            if names.filter({ $0 == "chunked" }).count > 1 { throw .chunkedRepeated(codings.joined(separator: ", ")) }
            if codings.last != "chunked" { throw .chunkedWithParameter(codings.joined(separator: ", ")) }
            if codings.count > 1 { throw .unsupportedTransferCoding(codings.dropLast().joined(separator: ", ")) }
            return .chunked
        }
        guard !lengths.isEmpty else { return absent }
        var values: [UInt64] = []
        for member in lengths.flatMap({ $0.split(separator: ",", omittingEmptySubsequences: false) }) {
            let text = member.trimmingWhitespace()
            guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { throw .invalidContentLength(text) }
            guard text.utf8.count <= 18, let value = UInt64(text) else { throw .contentLengthTooLarge(text) }
            values.append(value)
        }
        if values.count > 1 {
            if values.contains(where: { $0 != values[0] }) { throw .conflictingContentLength }
            throw .repeatedContentLength(values.map(String.init).joined(separator: ", "))
        }
        return values.first.map { $0 == 0 && absent == .none ? .none : .contentLength($0) } ?? absent
    }

    /// The framing of the common message, read in place: no `Transfer-Encoding` and at most one
    /// `Content-Length` line, of digits only — what ``of(_:version:absent:)`` gives it, without the
    /// arrays its general reading makes (five per response in a busy relay's profile); `nil` for
    /// anything else, which the general reading decides (errors included).
    static func common(_ fields: HeaderFields, absent: BodyFraming) -> BodyFraming? {
        var length: String?
        for field in fields {
            if field.name.equalsIgnoringASCIICase("Transfer-Encoding") { return nil }
            if field.name.equalsIgnoringASCIICase("Content-Length") {
                guard length == nil else { return nil }
                length = field.value
            }
        }
        guard let length else { return absent }
        let digits = length.utf8
        guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        let value = digits.reduce(UInt64(0)) { $0 * 10 + UInt64($1 - 0x30) }
        return value == 0 && absent == .none ? BodyFraming.none : .contentLength(value)
    }
}
