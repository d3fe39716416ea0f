/// One change a `header` rule makes to a request's header fields. Names compare case-insensitively
/// (RFC 9110 §5.1).
public enum HeaderEdit: Sendable, Hashable {
    /// Replace every field named `name` with one carrying `value`.
    case set(name: String, value: String)
    /// Append a field, keeping those of the same name.
    case add(name: String, value: String)
    /// Remove every field named `name`.
    case remove(name: String)

    /// The field the edit is about.
    public var name: String {
        switch self {
        case .set(let name, _), .add(let name, _), .remove(let name): name
        }
    }

    /// `fields` after `edits`, applied in order. Fields the edits do not name keep their order.
    public static func apply(_ edits: [HeaderEdit], to fields: [(name: String, value: String)])
        -> [(name: String, value: String)]
    {
        var result = fields
        for edit in edits {
            switch edit {
            case .set(let name, let value):
                result.removeAll { $0.name.lowercased() == name.lowercased() }
                result.append((name, value))
            case .add(let name, let value):
                result.append((name, value))
            case .remove(let name):
                result.removeAll { $0.name.lowercased() == name.lowercased() }
            }
        }
        return result
    }

    /// The fields no rule may edit: HostPin sets `Host` for each hop (a `Host` crossing hosts would send
    /// one origin's request to another), and the transports frame the body themselves.
    static let protected: Set<String> = ["host", "content-length", "transfer-encoding"]

    /// Whether `name` is an RFC 9110 §5.1 field name: a token (RFC 9110 §5.6.2).
    static func isFieldName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            default:
                "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
        }
    }

    /// Whether `value` can go on the wire as a field value: no CR, LF or NUL (RFC 9110 §5.5).
    static func isFieldValue(_ value: String) -> Bool {
        !value.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }
    }
}
