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
        fields.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
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
        listMembers(name).contains { $0.lowercased() == token.lowercased() }
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

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (OWS, RFC 9110 §5.6.3).
    func trimmingWhitespace() -> String {
        var scalars = Substring(self).unicodeScalars[...]
        while let first = scalars.first, first == " " || first == "\t" { scalars = scalars.dropFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars = scalars.dropLast() }
        return String(String.UnicodeScalarView(scalars))
    }
}
