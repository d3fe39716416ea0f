/// A head's field lines as positions in its bytes, checked by RFC 9112 §5's rules but not copied into
/// strings: a response head is forwarded line by line from its own bytes (an origin's response carries
/// a handful of fields the proxy never reads; making two `String`s of each, then writing them out again,
/// was 7.5 % of a busy proxy's time), and only the fields the proxy reads become strings
/// (``strings(named:)``).
struct FieldLines: Sendable, Hashable {
    /// One field line: where its name and its value (without surrounding whitespace) are.
    struct Line: Sendable, Hashable {
        let name: Range<Int>
        let value: Range<Int>
    }

    /// The head the ranges point into.
    let bytes: [UInt8]
    /// The field lines, in order.
    let lines: [Line]

    /// Checks and records the field lines of `bytes` from `start` (just past the start line's CRLF) to
    /// the empty line, as ``HeadSyntax/fields(_:)`` checks them: a name that is a token directly followed
    /// by the colon, a value without control characters, no obsolete line folding, strict CRLF.
    ///
    /// - Throws: ``HeadError`` naming the first problem.
    init(_ bytes: [UInt8], from start: Int) throws(HeadError) {
        var lines: [Line] = []
        lines.reserveCapacity(16)  // most heads: one allocation, not one per doubling
        var lineStart = start
        var index = start
        let end = bytes.count
        while index < end {
            let byte = bytes[index]
            if byte == HeadSyntax.lf { throw .bareLF }
            guard byte == HeadSyntax.cr else {
                index += 1
                continue
            }
            guard index + 1 < end, bytes[index + 1] == HeadSyntax.lf else { throw .bareCR }
            if index == lineStart { break }  // the empty line
            lines.append(try Self.line(bytes, lineStart..<index))
            index += 2
            lineStart = index
        }
        self.bytes = bytes
        self.lines = lines
    }

    /// One field line, checked.
    private static func line(_ bytes: [UInt8], _ range: Range<Int>) throws(HeadError) -> Line {
        let first = bytes[range.lowerBound]
        if first == HeadSyntax.space || first == HeadSyntax.tab { throw .obsoleteLineFolding }
        guard let colon = bytes[range].firstIndex(of: HeadSyntax.colon) else { throw .missingColon }
        let name = range.lowerBound..<colon
        if let last = bytes[name].last, last == HeadSyntax.space || last == HeadSyntax.tab { throw .whitespaceBeforeColon }
        guard HeadSyntax.isToken(bytes[name]) else { throw .invalidFieldName }
        let value = HeadSyntax.trimmingWhitespace(bytes[(colon + 1)..<range.upperBound]).indices
        guard bytes[value].allSatisfy(HeadSyntax.isFieldValueCharacter) else {
            throw .invalidFieldValue(name: String(decoding: bytes[name], as: UTF8.self))
        }
        return Line(name: name, value: value)
    }

    /// The lines whose names `names` holds (lower-case ASCII bytes, compared without case), as strings,
    /// in order.
    func strings(named names: [[UInt8]]) -> HeaderFields {
        var fields = HeaderFields(reservingCapacity: names.count)
        for line in lines where names.contains(where: { HeadSyntax.equalsIgnoringASCIICase(bytes[line.name], lowercased: $0) }) {
            fields.append(name: String(decoding: bytes[line.name], as: UTF8.self),
                          value: String(decoding: bytes[line.value], as: UTF8.self))
        }
        return fields
    }

    /// Appends `line` as sent: `name: value` CRLF.
    func append(_ line: Line, to output: inout [UInt8]) {
        output.append(contentsOf: bytes[line.name])
        output.append(HeadSyntax.colon)
        output.append(HeadSyntax.space)
        output.append(contentsOf: bytes[line.value])
        output.append(HeadSyntax.cr)
        output.append(HeadSyntax.lf)
    }
}
