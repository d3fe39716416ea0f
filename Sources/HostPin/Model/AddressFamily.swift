/// Which address records a resolution asks for: A (`v4`), AAAA (`v6`) or both (`any`).
///
/// `any` sends the A and AAAA queries together (RFC 1035 §3.2.2 types A = 1, AAAA = 28 per RFC 3596)
/// and succeeds when either returns addresses.
public enum AddressFamily: String, Sendable, Hashable, CaseIterable, CustomStringConvertible, LosslessStringConvertible {
    case v4
    case v6
    case any

    /// Parses the CLI spelling: `4`, `6` or `any` (also `v4`, `v6`).
    public init?(_ description: String) {
        switch description.lowercased() {
        case "4", "v4", "ipv4": self = .v4
        case "6", "v6", "ipv6": self = .v6
        case "any": self = .any
        default: return nil
        }
    }

    /// `4`, `6` or `any`, as `--family` takes it.
    public var description: String {
        switch self {
        case .v4: "4"
        case .v6: "6"
        case .any: "any"
        }
    }

    /// Whether an address of `family` answers a query for this family.
    public func admits(_ family: IPAddress.Family) -> Bool {
        switch (self, family) {
        case (.any, _), (.v4, .v4), (.v6, .v6): true
        default: false
        }
    }
}
