import HostPin

/// Where the addresses a request went to came from, as the access log shows it.
public enum AddressSource: Sendable, Hashable, CustomStringConvertible {
    /// The resolver answered: `upstream` (a trusted upstream, just now), `cache`, or `literal` (an IP
    /// literal or `localhost`, no query).
    case resolved(Resolution.Source)
    /// A `pin` rule gave them; no DNS query was made.
    case pinnedByRule

    /// `upstream`, `cache`, `literal`, `pin`.
    public var description: String {
        switch self {
        case .resolved(let source): source.rawValue
        case .pinnedByRule: "pin"
        }
    }
}
