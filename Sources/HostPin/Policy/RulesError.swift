/// Why rules could not be loaded. Nothing is ever half-loaded: any error refuses the whole file.
public enum RulesError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The rules file itself cannot be used.
    case file(path: String, FileProblem)
    /// The file is empty (or only white space).
    case empty(source: String)
    /// The text is not JSON; Foundation's reason.
    case notJSON(source: String, reason: String)
    /// The JSON holds rules with problems: every one, each at its key path, in file order.
    case invalid(source: String, problems: [RuleProblem])

    public var description: String {
        switch self {
        case .file(let path, let problem): "cannot use the rules file \(path): \(problem)"
        case .empty(let source): "\(source) is empty: a rules file is a JSON object {\"rules\": [...]}"
        case .notJSON(let source, let reason): "\(source) is not JSON: \(reason)"
        case .invalid(let source, let problems):
            "\(source) has \(problems.count == 1 ? "1 error" : "\(problems.count) errors"):\n"
                + problems.map { "  \($0)" }.joined(separator: "\n")
        }
    }
}
