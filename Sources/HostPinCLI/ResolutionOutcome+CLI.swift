import HostPin

extension ResolutionOutcome {
    /// The addresses, or NXDOMAIN or NODATA as the error ``HostResolver/resolve(_:family:)`` throws.
    var addresses: Result<Resolution, ResolutionError> {
        switch answer {
        case .addresses(let resolution): .success(resolution)
        case .negative(let negative): .failure(negative.error)
        }
    }
}
