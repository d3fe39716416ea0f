/// The process exit codes of `hostpin lookup` and `hostpin compare` (DESIGN.md, Contracts: CLI exit codes).
///
/// One enum for both subcommands so a code keeps one meaning everywhere; each subcommand's help lists
/// the ones it can return, with the meanings written here.
enum ExitStatus: Int32, Sendable, CaseIterable {
    /// Every name resolved; for `compare`, the answers are consistent.
    case success = 0
    /// At least one name does not exist (NXDOMAIN) or has no address of the family (NODATA).
    case notFound = 1
    /// The command line (or `HOSTPIN_UPSTREAMS`) is wrong: nothing was resolved.
    case usage = 2
    /// A trusted upstream failed or the time budget ran out; wins over ``notFound``.
    case upstreamFailure = 3
    /// `compare`: the local resolver contradicts the trusted one.
    case hijacked = 4
    /// `compare`: the local resolver failed, or there was nothing to compare.
    case inconclusive = 5

    /// One line of help text: the code and its meaning.
    var helpLine: String {
        let meaning = switch self {
        case .success: "success (lookup: every name resolved; compare: consistent)"
        case .notFound: "some name does not exist (NXDOMAIN) or has no address of the family (NODATA)"
        case .usage: "usage error: bad option, value, host name or HOSTPIN_UPSTREAMS"
        case .upstreamFailure: "a trusted upstream failed or timed out (wins over 1)"
        case .hijacked: "compare: the local resolver's answer contradicts the trusted one (hijacked)"
        case .inconclusive: "compare: the local resolver failed, so there is no verdict either way (inconclusive)"
        }
        return "  \(rawValue)  \(meaning)"
    }
}
