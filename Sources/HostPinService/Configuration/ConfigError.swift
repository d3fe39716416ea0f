import HostPin

/// Why a configuration file cannot be used. Nothing of a bad file is used: any problem refuses it whole.
package enum ConfigError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file itself cannot be read.
    case file(path: String, FileProblem)
    /// The file is empty (or only white space).
    case empty(path: String)
    /// The text is not JSON; Foundation's reason, with the position.
    case notJSON(path: String, reason: String)
    /// The JSON has problems: every one, each at its key path.
    case invalid(path: String, problems: [ConfigProblem])

    /// One line per problem, each naming the file: `FILE: key.path: reason`.
    package var lines: [String] {
        switch self {
        case .file(let path, let problem): ["cannot use the configuration file \(path): \(problem)"]
        case .empty(let path): ["\(path) is empty: a configuration file is a JSON object ({} for every default)"]
        case .notJSON(let path, let reason): ["\(path) is not JSON: \(reason)"]
        case .invalid(let path, let problems): problems.map { "\(path): \($0)" }
        }
    }

    package var description: String { lines.joined(separator: "; ") }
}
