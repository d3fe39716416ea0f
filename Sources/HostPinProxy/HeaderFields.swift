/// A message's field lines in received order, names compared case-insensitively (RFC 9110 §5.1).
public struct HeaderFields: Sendable, Hashable, Sequence {
    /// One field line: the name as received and the value without surrounding whitespace.
    public struct Field: Sendable, Hashable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The field lines, in order.
    public private(set) var fields: [Field] = []

    /// No fields.
    public init() {}

    /// Appends one field line.
    public mutating func append(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// The values of every line named `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { $0.name.equalsIgnoringASCIICase(name) }.map(\.value)
    }

    /// The members of the comma-separated lists in every line named `name`, trimmed, empty ones
    /// dropped (RFC 9110 §5.6.1).
    public func listMembers(_ name: String) -> [String] {
        values(name).flatMap { $0.split(separator: ",") }
            .map { $0.trimmingWhitespace() }
            .filter { !$0.isEmpty }
    }

    /// Whether the `name` list holds `token`, case-insensitively (e.g. `Connection: close`).
    public func contains(_ name: String, token: String) -> Bool {
        listMembers(name).contains { $0.equalsIgnoringASCIICase(token) }
    }

    /// These fields without any line whose lower-cased name is in `names`.
    public func removing(_ names: Set<String>) -> HeaderFields {
        var copy = self
        copy.fields.removeAll { names.contains($0.name.lowercased()) }
        return copy
    }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// The field lines as sent: `Name: value` CRLF each.
    var wireBytes: [UInt8] {
        var bytes: [UInt8] = []
        for field in fields {
            bytes.append(contentsOf: field.name.utf8)
            bytes.append(contentsOf: ": ".utf8)
            bytes.append(contentsOf: field.value.utf8)
            bytes.append(contentsOf: [HeadSyntax.cr, HeadSyntax.lf])
        }
        return bytes
    }
}

extension String {
    /// Whether the two are equal but for the case of ASCII letters, without making lower-cased copies
    /// (field names and the tokens compared here are ASCII; this runs several times per message).
    func equalsIgnoringASCIICase(_ other: String) -> Bool {
        let (mine, theirs) = (utf8, other.utf8)
        guard mine.count == theirs.count else { return false }
        return zip(mine, theirs).allSatisfy { a, b in
            a == b || (a | 0x20 == b | 0x20 && (0x61...0x7A).contains(a | 0x20))
        }
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (OWS, RFC 9110 §5.6.3).
    func trimmingWhitespace() -> String {
        let text = Substring(self)
        let bytes = text.utf8
        let isWhitespace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, isWhitespace(bytes[start]) { start = bytes.index(after: start) }
        while start < end, isWhitespace(bytes[bytes.index(before: end)]) { end = bytes.index(before: end) }
        return String(text[start..<end])
    }
}
