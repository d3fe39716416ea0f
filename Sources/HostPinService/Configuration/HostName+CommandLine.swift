import HostPin

extension HostName {
    /// Parses a host name typed on the command line; an invalid one is a usage error with the reason
    /// (README.md, "Exit codes"), found before any query is sent.
    package static func commandLineArgument(_ text: String) throws(UsageError) -> HostName {
        do throws(ResolutionError) {
            return try HostName.parse(text)
        } catch {
            if case .badName(let input, let problem) = error { throw .invalidHostName(input, problem) }
            // `parse` throws nothing but `badName`; keep any other error readable rather than trapping.
            throw .invalidHostName(text, .idna(error.description))
        }
    }
}
