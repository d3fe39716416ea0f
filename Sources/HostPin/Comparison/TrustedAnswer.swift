/// What the trusted side said about a name, when it said something a local answer can be compared with:
/// addresses, NXDOMAIN or NODATA. A failure (timeout, SERVFAIL, …) is not one: there is nothing to judge
/// against.
public enum TrustedAnswer: Sendable, Hashable {
    /// The trusted resolution.
    case addresses(Resolution)
    /// The name does not exist (RFC 2308 §2.1).
    case nxdomain
    /// The name has no address of the family asked (RFC 2308 §2.2).
    case nodata

    /// The answer in a trusted outcome, or `nil` when the outcome is a failure to get one.
    public init?(_ outcome: Result<Resolution, ResolutionError>) {
        switch outcome {
        case .success(let resolution): self = .addresses(resolution)
        case .failure(.nxdomain): self = .nxdomain
        case .failure(.nodata): self = .nodata
        case .failure(.badName), .failure(.noUpstreams), .failure(.upstreamsFailed), .failure(.timeout),
             .failure(.cancelled), .failure(.setupFailed), .failure(.dnssecBogus):
            return nil
        }
    }

    /// The trusted addresses, in answer order; empty for NXDOMAIN and NODATA.
    public var addresses: [IPAddress] {
        if case .addresses(let resolution) = self { return resolution.ipAddresses }
        return []
    }
}
