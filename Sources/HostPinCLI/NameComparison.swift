import HostPin

/// What `compare` found for one name: both answers and the verdict.
struct NameComparison: Sendable {
    /// The name compared.
    let name: HostName
    /// The trusted side's outcome.
    let trusted: Result<Resolution, ResolutionError>
    /// The local resolver's outcome.
    let local: Result<Resolution, ResolutionError>
    /// The verdict; `nil` when the trusted side failed (nothing to compare against).
    let verdict: HijackVerdict?

    /// The exit status this name alone would give.
    var status: ExitStatus {
        switch verdict {
        case nil: .upstreamFailure
        case .consistent: .success
        case .hijacked: .hijacked
        case .inconclusive: .inconclusive
        }
    }
}
