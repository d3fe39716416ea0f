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

    /// No fields yet, room for `capacity` without growing.
    init(reservingCapacity capacity: Int) {
        fields.reserveCapacity(capacity)
    }

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
        !forEachMember(of: name) { member in
            !member.elementsEqual(token.utf8, by: HeadSyntax.sameIgnoringASCIICase)
        }
    }

    /// Calls `body` with each member of the comma-separated lists in every line named `name`, trimmed
    /// (an empty one too), until it returns `false`; returns whether every call returned `true`. Members
    /// are read where they stand in the value, without splitting it into new strings (this runs for
    /// every message: `split`, trimming and filtering made some six arrays per `Connection` field).
    func forEachMember(of name: String, _ body: (Substring.UTF8View) -> Bool) -> Bool {
        for field in fields where field.name.equalsIgnoringASCIICase(name) {
            let value = field.value.utf8[...]
            var start = value.startIndex
            while true {
                let end = value[start...].firstIndex(of: UInt8(ascii: ",")) ?? value.endIndex
                guard body(HeadSyntax.trimmingWhitespace(value[start..<end])) else { return false }
                guard end < value.endIndex else { break }
                start = value.index(after: end)
            }
        }
        return true
    }

    /// These fields without any line whose lower-cased name is in `names`.
    public func removing(_ names: Set<String>) -> HeaderFields {
        removing { name in names.contains(where: name.equalsIgnoringASCIICase) }
    }

    /// These fields without any line whose name `isRemoved`. Names are compared in place by the caller,
    /// not through lower-cased copies (this runs for every message), and the array is copied only when
    /// a line goes.
    func removing(where isRemoved: (String) -> Bool) -> HeaderFields {
        guard fields.contains(where: { isRemoved($0.name) }) else { return self }
        var copy = self
        copy.fields.removeAll { isRemoved($0.name) }
        return copy
    }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// The field lines as sent: `Name: value` CRLF each.
    var wireBytes: [UInt8] {
        var bytes: [UInt8] = []
        appendWireBytes(to: &bytes)
        return bytes
    }

    /// Appends the field lines as sent (``wireBytes``) to `bytes`.
    func appendWireBytes(to bytes: inout [UInt8]) {
        for field in fields {
            bytes.append(contentsOf: field.name.utf8)
            bytes.append(HeadSyntax.colon)
            bytes.append(HeadSyntax.space)
            bytes.append(contentsOf: field.value.utf8)
            bytes.append(HeadSyntax.cr)
            bytes.append(HeadSyntax.lf)
        }
    }

    /// An estimate of the bytes ``wireBytes`` holds, for reserving capacity.
    var wireSizeEstimate: Int {
        fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
    }
}

extension String {
    /// Whether the two are equal but for the case of ASCII letters, without making lower-cased copies
    /// (field names and the tokens compared here are ASCII; this runs several times per message).
    func equalsIgnoringASCIICase(_ other: String) -> Bool {
        let (mine, theirs) = (utf8, other.utf8)
        guard mine.count == theirs.count else { return false }
        // Native strings are contiguous UTF-8: compare the bytes directly (iterating two UTF8Views
        // through zip showed in the proxy's profile).
        if let result = mine.withContiguousStorageIfAvailable({ a in
            theirs.withContiguousStorageIfAvailable { b in a.indices.allSatisfy { HeadSyntax.sameIgnoringASCIICase(a[$0], b[$0]) } }
        }), let result {
            return result
        }
        return zip(mine, theirs).allSatisfy(HeadSyntax.sameIgnoringASCIICase)
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (OWS, RFC 9110 §5.6.3).
    func trimmingWhitespace() -> String {
        String(Substring(HeadSyntax.trimmingWhitespace(Substring(self).utf8)))
    }
}
