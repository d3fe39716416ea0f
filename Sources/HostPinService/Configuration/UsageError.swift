import HostPin

/// Why a command line cannot be run. Closed, so every message is written here once, as a sentence.
///
/// Printed to standard error as `hostpin: error: <sentence>` followed by a pointer to the help; the
/// process then exits with the usage status (2).
package enum UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No subcommand was given.
    case missingSubcommand
    /// The first argument names no subcommand.
    case unknownSubcommand(String, subcommands: [String])
    /// An argument starting with `-` that the command does not define.
    case unknownOption(String)
    /// An option that takes a value came last, or was followed by another option.
    case missingValue(option: String)
    /// A flag was written `--flag=value`.
    case flagTakesNoValue(flag: String)
    /// An option's value does not parse; `reason` says why.
    case invalidValue(option: String, reason: String)
    /// A required positional argument is missing; the text names it (e.g. `NAME`).
    case missingArgument(String)
    /// More positional arguments than the command takes.
    case unexpectedArgument(String)
    /// A host name on the command line is invalid (a usage error, with the reason: README.md "The CLI").
    case invalidHostName(String, HostNameProblem)
    /// An environment variable's value does not parse; `reason` says why.
    case invalidEnvironment(variable: String, reason: String)
    /// An environment variable that lists upstreams is set but empty or blank.
    case emptyEnvironment(variable: String)
    /// A `--bootstrap` or `--pin` (`option`) names `name`, which none of the upstreams (`upstreamNames`,
    /// the encrypted ones' NAMEs) has.
    case unusedUpstreamName(option: String, name: String, upstreamNames: [String])
    /// A URL on the command line cannot be fetched; `reason` says why.
    case invalidURL(String, reason: String)
    /// A file named on the command line cannot be read; `reason` says why.
    case unreadableFile(option: String, path: String, reason: String)
    /// A `--ca-file` opens but holds no PEM certificate.
    case caFile(CAFileProblem)
    /// Standard input (`@-`, `--batch -`) cannot be read; `reason` says why.
    case unreadableStandardInput(reason: String)
    /// Two parts of the command line cannot go together; the text says which and why.
    case conflict(String)
    /// The configuration file (`--config`) cannot be used: every problem.
    case config(ConfigError)
    /// An encrypted upstream names its server by a host name that no `--bootstrap` gives an address for,
    /// and no plain upstream is listed to look it up through (the system resolver never is).
    case unbootstrapped(upstream: String, name: String)

    package var description: String {
        switch self {
        case .missingSubcommand:
            "no subcommand was given."
        case .unknownSubcommand(let name, let subcommands):
            "unknown subcommand '\(name)'; the subcommands are " + subcommands.joined(separator: ", ") + " and help."
        case .unknownOption(let option):
            "unknown option '\(option)'."
        case .missingValue(let option):
            "option '\(option)' needs a value."
        case .flagTakesNoValue(let flag):
            "flag '\(flag)' takes no value."
        case .invalidValue(let option, let reason):
            "invalid value for '\(option)': \(Self.clause(reason))."
        case .missingArgument(let name):
            "missing argument \(name)."
        case .unexpectedArgument(let argument):
            "unexpected argument '\(argument)'."
        case .invalidHostName(let text, let problem):
            "'\(text)' is not a valid host name: \(problem)."
        case .invalidEnvironment(let variable, let reason):
            "invalid \(variable): \(reason)."
        case .emptyEnvironment(let variable):
            "\(variable) is set but names no upstream; unset it to use the defaults, or give IP:PORT/URL values."
        case .unusedUpstreamName(let option, let name, let upstreamNames):
            "\(option) names \(name), which no upstream uses ("
                + (upstreamNames.isEmpty ? "no upstream listed is named: plain ones are only addresses"
                    : "the upstreams' names: " + upstreamNames.joined(separator: ", ")) + ")."
        case .invalidURL(let text, let reason):
            "'\(text)' is not a URL hostpin can fetch: \(reason)."
        case .unreadableFile(let option, let path, let reason):
            "cannot read '\(path)' for '\(option)': \(Self.clause(reason))."
        case .caFile(let problem):
            "\(problem)."
        case .unreadableStandardInput(let reason):
            "cannot read standard input: \(Self.clause(reason))."
        case .conflict(let text):
            "\(text)."
        case .config(let error):
            "\(error)."
        case .unbootstrapped(let upstream, let name):
            "'\(upstream)' names its server by host name, and nothing says where \(name) is: give "
                + "--bootstrap \(name)=IP[,IP...], or list a plain upstream (IP:PORT) to look it up through "
                + "(the system resolver is never asked)."
        }
    }

    /// The sentences to print, one line each: every problem of a configuration file, else the description.
    package var lines: [String] {
        if case .config(let error) = self { error.lines } else { [description] }
    }

    /// `reason` without a final period, so the sentence around it ends with exactly one.
    private static func clause(_ reason: String) -> String {
        var text = reason
        while text.hasSuffix(".") { text.removeLast() }
        return text
    }
}
