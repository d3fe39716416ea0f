/// The byte-level grammar shared by request and response heads (RFC 9110 §5, RFC 9112 §2.2, §5): line
/// splitting with strict CRLF, tokens, field lines.
enum HeadSyntax {
    static let cr: UInt8 = 0x0D
    static let lf: UInt8 = 0x0A
    static let space: UInt8 = 0x20
    static let tab: UInt8 = 0x09
    static let colon = UInt8(ascii: ":")

    /// `tchar` (RFC 9110 §5.6.2).
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "A")...UInt8(ascii: "Z"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
             UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// Whether `bytes` is a non-empty token.
    static func isToken(_ bytes: some Collection<UInt8>) -> Bool {
        !bytes.isEmpty && bytes.allSatisfy(isTokenCharacter)
    }

    /// `bytes` without leading and trailing spaces and tabs (OWS, RFC 9110 §5.6.3).
    static func trimmingWhitespace<Bytes: BidirectionalCollection<UInt8>>(_ bytes: Bytes) -> Bytes.SubSequence {
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, bytes[start] == space || bytes[start] == tab { start = bytes.index(after: start) }
        while start < end, bytes[bytes.index(before: end)] == space || bytes[bytes.index(before: end)] == tab {
            end = bytes.index(before: end)
        }
        return bytes[start..<end]
    }

    /// Whether two bytes are equal but for the case of an ASCII letter.
    static func sameIgnoringASCIICase(_ a: UInt8, _ b: UInt8) -> Bool {
        a == b || (a | 0x20 == b | 0x20 && (0x61...0x7A).contains(a | 0x20))
    }

    /// Whether `bytes` equal `lowercased` (lower-case ASCII) but for the case of ASCII letters; lengths
    /// first, since most names compared differ in length.
    static func equalsIgnoringASCIICase(_ bytes: ArraySlice<UInt8>, lowercased: [UInt8]) -> Bool {
        bytes.count == lowercased.count && zip(bytes, lowercased).allSatisfy(sameIgnoringASCIICase)
    }

    /// `field-vchar` or whitespace: VCHAR, obs-text, SP, HTAB (RFC 9110 §5.5).
    static func isFieldValueCharacter(_ byte: UInt8) -> Bool {
        byte == tab || (byte >= 0x20 && byte != 0x7F)
    }

    /// Finds the end of a head in `buffer` (the index just past the empty line), checking every line
    /// ending and the limits as it goes, so a bad or oversized head fails as soon as its bytes arrive.
    ///
    /// - Parameters:
    ///   - buffer: Bytes received so far, starting at the head's first line.
    ///   - limits: The size limits.
    /// - Returns: The head's length including the final CRLF CRLF, or `nil` when more bytes are needed.
    /// - Throws: ``HeadError/bareCR``, ``HeadError/bareLF`` or a size limit.
    static func endOfHead(in buffer: [UInt8], limits: HeadLimits) throws(HeadError) -> Int? {
        var lineStart = 0
        var lineNumber = 0
        var index = 0
        let count = buffer.count
        while index < count {
            let byte = buffer[index]
            if byte == cr {
                guard index + 1 < count else { break }
                guard buffer[index + 1] == lf else { throw .bareCR }
                let lineLength = index - lineStart
                if lineLength == 0 && lineNumber > 0 {
                    if index + 2 > limits.maximumHeadBytes { throw .headTooLarge(limit: limits.maximumHeadBytes) }
                    return index + 2
                }
                try check(lineLength: lineLength, lineNumber: lineNumber, limits: limits)
                lineNumber += 1
                if lineNumber > limits.maximumFieldCount + 1 { throw .tooManyFields(limit: limits.maximumFieldCount) }
                index += 2
                lineStart = index
                continue
            }
            if byte == lf { throw .bareLF }
            index += 1
        }
        try check(lineLength: count - lineStart, lineNumber: lineNumber, limits: limits)
        if count > limits.maximumHeadBytes { throw .headTooLarge(limit: limits.maximumHeadBytes) }
        return nil
    }

    private static func check(lineLength: Int, lineNumber: Int, limits: HeadLimits) throws(HeadError) {
        if lineNumber == 0 {
            if lineLength > limits.maximumStartLineBytes {
                throw .requestLineTooLong(limit: limits.maximumStartLineBytes)
            }
        } else if lineLength > limits.maximumFieldLineBytes {
            throw .fieldLineTooLong(limit: limits.maximumFieldLineBytes)
        }
    }

    /// Splits a complete head (as found by ``endOfHead(in:limits:)``) into its start line and field lines,
    /// without the final empty line.
    static func lines(of head: ArraySlice<UInt8>) throws(HeadError) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        lines.reserveCapacity(16)  // most heads: one allocation, not one per doubling
        var lineStart = head.startIndex
        var index = head.startIndex
        while index < head.endIndex {
            let byte = head[index]
            if byte == lf { throw .bareLF }
            if byte == cr {
                guard index + 1 < head.endIndex, head[index + 1] == lf else { throw .bareCR }
                if index == lineStart && !lines.isEmpty { return lines }
                lines.append(head[lineStart..<index])
                index += 2
                lineStart = index
                continue
            }
            index += 1
        }
        return lines
    }

    /// A start line's parts: `line` cut at its first two spaces, empty parts kept, the rest in the last
    /// (`line.split(separator: space, maxSplits: 2, omittingEmptySubsequences: false)`), without an
    /// array: `split` grew one part by part, for every request and every response.
    static func startLineParts(_ line: ArraySlice<UInt8>) -> StartLineParts {
        guard let gap = line.firstIndex(of: space) else { return StartLineParts(first: line, second: nil, third: nil) }
        let rest = line[(gap + 1)...]
        guard let next = rest.firstIndex(of: space) else { return StartLineParts(first: line[..<gap], second: rest, third: nil) }
        return StartLineParts(first: line[..<gap], second: rest[..<next], third: rest[(next + 1)...])
    }

    /// ``startLineParts(_:)``: the method or the version, then the target or the status code, then the
    /// rest (the version, the reason phrase); `nil` where the line has fewer spaces.
    struct StartLineParts {
        let first: ArraySlice<UInt8>
        let second: ArraySlice<UInt8>?
        let third: ArraySlice<UInt8>?
    }

    /// Parses field lines (RFC 9112 §5): `name ":" OWS value OWS`, name a token directly followed by the
    /// colon, value without control characters, no obsolete line folding.
    static func fields(_ lines: ArraySlice<ArraySlice<UInt8>>) throws(HeadError) -> HeaderFields {
        var fields = HeaderFields()
        for line in lines {
            guard let first = line.first else { throw .invalidFieldName }
            if first == space || first == tab { throw .obsoleteLineFolding }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { throw .missingColon }
            let name = line[line.startIndex..<colon]
            if let last = name.last, last == space || last == tab { throw .whitespaceBeforeColon }
            guard isToken(name) else { throw .invalidFieldName }
            let nameText = String(decoding: name, as: UTF8.self)
            var value = line[line.index(after: colon)...]
            while let head = value.first, head == space || head == tab { value = value.dropFirst() }
            while let tail = value.last, tail == space || tail == tab { value = value.dropLast() }
            guard value.allSatisfy(isFieldValueCharacter) else { throw .invalidFieldValue(name: nameText) }
            fields.append(name: nameText, value: String(decoding: value, as: UTF8.self))
        }
        return fields
    }

    /// Parses `HTTP/1.0` or `HTTP/1.1`; a later HTTP/1.x (`HTTP/1.2`) is HTTP/1.1, the highest minor
    /// version HostPin speaks (RFC 9110 §2.5: a recipient processes it as that version, and answers in it).
    static func version(_ bytes: some Collection<UInt8>) throws(HeadError) -> HTTPVersion {
        let text = String(decoding: bytes, as: UTF8.self)
        switch text {
        case "HTTP/1.1": return .http11
        case "HTTP/1.0": return .http10
        default:
            let digits = text.utf8.dropFirst(5)
            guard text.hasPrefix("HTTP/"), digits.count == 3, digits.dropFirst().first == UInt8(ascii: "."),
                  let major = digits.first, let minor = digits.last,
                  (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(major),
                  (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(minor)
            else { throw .malformedRequestLine }
            if major == UInt8(ascii: "1") { return .http11 }
            throw .unsupportedVersion(text)
        }
    }
}

/// The HTTP/1.x versions HostPin speaks (RFC 9112 §2.3).
public enum HTTPVersion: String, Sendable, Hashable, CustomStringConvertible {
    case http10 = "HTTP/1.0"
    case http11 = "HTTP/1.1"

    public var description: String { rawValue }
}
