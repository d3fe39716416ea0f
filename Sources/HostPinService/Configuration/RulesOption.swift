import Foundation
import HostPin

/// `--rules FILE`: interception rules (README.md, "Rules"), loaded while the command line is parsed,
/// so a bad file stops the command before anything is sent, as a usage error listing every problem.
package enum RulesOption {
    /// The option's help lines.
    package static let helpLines = """
          --rules FILE         Apply the interception rules in FILE (JSON; see README.md, "Rules"): pin
                               names to addresses, redirect, answer from local files, block, edit
                               header fields, or pass hosts to the system. A bad file is a usage error
                               (2) listing every problem at its key path (rules[3].to).
        """

    /// The rules the last `--rules` names, else the configuration file's `rules`, or none.
    ///
    /// - Throws: ``UsageError/unreadableFile(option:path:reason:)`` when the file cannot be used,
    ///   ``UsageError/invalidValue(option:reason:)`` with every problem when its contents are wrong.
    package static func parse(_ parser: inout OptionParser) throws(UsageError) -> Rules {
        guard let path = try parser.values("--rules", { text throws(UsageError) in text }).last else {
            return parser.takeDefaultRules() ?? Rules()
        }
        do throws(RulesError) {
            return try Rules(contentsOf: URL(fileURLWithPath: path))
        } catch {
            switch error {
            case .file(_, let problem):
                throw .unreadableFile(option: "--rules", path: path, reason: problem.description)
            case .invalid(let source, let problems):
                // One line: standard error escapes line breaks.
                let count = problems.count == 1 ? "1 error" : "\(problems.count) errors"
                throw .invalidValue(option: "--rules",
                                    reason: "\(source) has \(count): " + problems.map(\.description).joined(separator: "; "))
            case .empty, .notJSON:
                throw .invalidValue(option: "--rules", reason: error.description)
            }
        }
    }
}
