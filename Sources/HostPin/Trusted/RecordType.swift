/// A resource record TYPE (RFC 1035 §3.2.2), as carried on the wire.
struct RecordType: RawRepresentable, Sendable, Hashable {
    let rawValue: UInt16

    init(rawValue: UInt16) {
        self.rawValue = rawValue
    }

    /// An IPv4 address (RFC 1035 §3.4.1).
    static let a = RecordType(rawValue: 1)
    /// The canonical name of an alias (RFC 1035 §3.3.1).
    static let cname = RecordType(rawValue: 5)
    /// The start of a zone of authority (RFC 1035 §3.3.13); negative answers carry it (RFC 2308 §3).
    static let soa = RecordType(rawValue: 6)
    /// An IPv6 address (RFC 3596 §2.1).
    static let aaaa = RecordType(rawValue: 28)

    /// The address record types a lookup for `family` asks for: A, AAAA, or both, A first.
    static func addressTypes(for family: AddressFamily) -> [RecordType] {
        switch family {
        case .v4: [.a]
        case .v6: [.aaaa]
        case .any: [.a, .aaaa]
        }
    }
}
