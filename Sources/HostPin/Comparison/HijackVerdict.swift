/// Whether an untrusted resolver's answer contradicts the trusted one.
///
/// - `hijacked`: the untrusted side returned an address the trusted side did not, returned addresses for a
///   name the trusted side says does not exist (NXDOMAIN), or said NXDOMAIN for a name the trusted side
///   resolved (blocking by fake NXDOMAIN).
/// - `consistent`: every untrusted address is among the trusted ones, or both sides agree the name does
///   not exist or has no address of the family.
/// - `inconclusive`: the untrusted side failed (timeout, SERVFAIL, REFUSED), or one side has no data of
///   the family while the other has — nothing to compare.
///
/// Legitimately different answers (geo-DNS, load balancing) also show as `hijacked`: the verdict compares
/// answers, it cannot know intent.
public enum HijackVerdict: String, Sendable, Hashable, CustomStringConvertible {
    case consistent
    case hijacked
    case inconclusive

    /// The verdict for a successful or negative trusted answer against the untrusted outcome.
    ///
    /// - Parameters:
    ///   - trusted: The trusted resolution, or its NXDOMAIN/NODATA error. Callers handle trusted-side
    ///     upstream failures themselves (there is nothing to compare against).
    ///   - untrusted: The untrusted outcome.
    public init(trusted: Result<Resolution, ResolutionError>, untrusted: Result<Resolution, ResolutionError>) {
        switch (trusted, untrusted) {
        case (.success(let truth), .success(let claim)):
            let known = Set(truth.ipAddresses)
            self = claim.ipAddresses.allSatisfy(known.contains) ? .consistent : .hijacked
        case (.failure(.nxdomain), .success), (.success, .failure(.nxdomain)):
            self = .hijacked
        case (.failure(.nxdomain), .failure(.nxdomain)), (.failure(.nodata), .failure(.nodata)):
            self = .consistent
        default:
            self = .inconclusive
        }
    }

    public var description: String { rawValue }
}
