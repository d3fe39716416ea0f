/// Whether a local (untrusted) resolver's answer contradicts the trusted one, and why
/// (``HijackDetector`` decides).
///
/// - `consistent`: every local address is among the trusted ones, or neither side gives an address.
/// - `hijacked`: at least one reason is evidence of a hijack (``HijackReason/Code/isHijack``).
/// - `inconclusive`: the answers differ but nothing marks the difference as a hijack (different public
///   addresses, as CDNs give; a name the local resolver blocks), or the local resolver failed.
public enum HijackVerdict: Sendable, Hashable, CustomStringConvertible {
    case consistent
    /// The hijack reasons, in the order ``HijackReason/Code`` lists them.
    case hijacked([HijackReason])
    /// Why no verdict either way.
    case inconclusive([HijackReason])

    /// The reasons (none for `consistent`).
    public var reasons: [HijackReason] {
        switch self {
        case .consistent: []
        case .hijacked(let reasons), .inconclusive(let reasons): reasons
        }
    }

    /// `consistent`, `hijacked` or `inconclusive`.
    public var description: String {
        switch self {
        case .consistent: "consistent"
        case .hijacked: "hijacked"
        case .inconclusive: "inconclusive"
        }
    }
}
