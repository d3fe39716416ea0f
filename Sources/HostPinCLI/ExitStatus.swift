/// The process exit codes of `hostpin lookup`, `hostpin compare` and `hostpin fetch` (README.md, "The
/// CLI": exit codes). `fetch` uses curl's numbers where they overlap.
///
/// One enum for every subcommand so a code keeps one meaning everywhere; each subcommand's help lists
/// the ones it can return, with the meanings written here (or, for the shared 0, 1 and 2, its own
/// wording through ``helpLine(meaning:)``).
enum ExitStatus: Int32, Sendable, CaseIterable {
    /// Every name resolved; for `compare`, the answers are consistent; for `fetch`, a response arrived.
    case success = 0
    /// At least one name does not exist (NXDOMAIN) or has no address of the family (NODATA); for
    /// `fetch` (as ``transferFailed``), any failure without a code of its own; for every command,
    /// standard output could not be written.
    case notFound = 1
    /// The command line (or `HOSTPIN_UPSTREAMS`) is wrong: nothing was resolved.
    case usage = 2
    /// A trusted upstream failed or the time budget ran out; wins over ``notFound``.
    case upstreamFailure = 3
    /// `compare`: the local resolver contradicts the trusted one.
    case hijacked = 4
    /// `compare`: the answers differ with no sign of hijacking (different public addresses, a blocked
    /// name), or the local resolver failed.
    case inconclusive = 5
    /// `fetch`: the URL's host (or a redirect's) could not be resolved (curl's 6).
    case couldNotResolve = 6
    /// `fetch`: no pinned address accepted a connection (curl's 7).
    case couldNotConnect = 7
    /// `fetch --fail`: the response's status is 400 or more (curl's 22).
    case httpError = 22
    /// `fetch`: a timeout, or `--max-time` ran out (curl's 28).
    case timedOut = 28
    /// `fetch`: the TLS handshake failed for a reason other than the certificate (curl's 35).
    case tlsHandshakeFailed = 35
    /// `fetch -L`: more redirects than the hop limit (curl's 47).
    case tooManyRedirects = 47
    /// `fetch --rules`: a `block` rule refused the request. curl has no code for a refusal by policy; 56
    /// is what curl exits with when a proxy refuses its CONNECT (403), as `hostpin proxy` does for a
    /// blocked host.
    case blocked = 56
    /// `fetch`: the server's certificate is not trusted or is for another name (curl's 60).
    case certificateUntrusted = 60
    /// `fetch --ca-file`: the file is readable but holds no PEM certificate (curl's 77).
    case caFileProblem = 77

    /// `fetch`'s "anything else": the code `lookup` uses for a missing name, as curl uses 1 for
    /// failures it has no closer code for.
    static let transferFailed = ExitStatus.notFound

    /// One line of help text: the code and its meaning.
    var helpLine: String {
        let meaning = switch self {
        case .success: "success (lookup: every name resolved; compare: consistent; fetch: a response arrived)"
        case .notFound: "lookup: some name does not exist (NXDOMAIN) or has no address of the family (NODATA); "
            + "fetch: any other failure; any command: the output cannot be written"
        case .usage: "usage error: bad option, value, host name, URL or HOSTPIN_UPSTREAMS"
        case .upstreamFailure: "a trusted upstream failed or timed out (wins over 1)"
        case .hijacked: "compare: the local resolver's answer contradicts the trusted one (hijacked)"
        case .inconclusive: "compare: the answers differ with no sign of hijacking, or the local resolver failed (inconclusive)"
        case .couldNotResolve: "fetch: the host could not be resolved through the trusted upstreams"
        case .couldNotConnect: "fetch: no pinned address of the host accepted a connection"
        case .httpError: "fetch --fail: the HTTP status is 400 or more"
        case .timedOut: "fetch: the transfer timed out, or --max-time ran out"
        case .tlsHandshakeFailed: "fetch: the TLS handshake failed"
        case .tooManyRedirects: "fetch -L: too many redirects"
        case .blocked: "fetch --rules: a block rule refused the request (curl's code for a proxy refusing CONNECT)"
        case .certificateUntrusted: "fetch: the server's certificate is not trusted for the host name"
        case .caFileProblem: "fetch: problem with the CA certificate file (--ca-file holds no PEM certificate)"
        }
        return helpLine(meaning: meaning)
    }

    /// One line of help text with a subcommand's own wording of the meaning; codes are right-aligned
    /// in a column of two (`  0  …`, ` 22  …`).
    func helpLine(meaning: String) -> String {
        let code = rawValue.description
        return String(repeating: " ", count: max(0, 3 - code.count)) + code + "  " + meaning
    }
}
