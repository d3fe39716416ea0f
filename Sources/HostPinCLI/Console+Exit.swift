import HostPinService

extension Console {
    /// The exit status once the command is done: `status`, unless standard output could not be written —
    /// then one sentence on standard error and 1 (a command that failed otherwise keeps its own status).
    static func finish(_ status: ExitStatus) -> ExitStatus {
        guard let reason = outputFailure else { return status }
        error("hostpin: cannot write output: \(reason)")
        return status == .success ? .transferFailed : status
    }
}
