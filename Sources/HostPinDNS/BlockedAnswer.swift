/// How the stub answers an A or AAAA query for a name a `block` rule matches.
public enum BlockedAnswer: String, Sendable, Hashable, CaseIterable {
    /// NXDOMAIN: the name does not exist. The default: clients fail at once, and nothing connects.
    case nxdomain
    /// The unspecified address, `0.0.0.0` for A and `::` for AAAA: clients that treat NXDOMAIN as a
    /// reason to try elsewhere (a search list, another resolver) stop there and connect nowhere.
    case unspecified
}
