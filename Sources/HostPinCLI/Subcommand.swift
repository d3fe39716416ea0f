import HostPinService

/// One `hostpin` subcommand, shaped like a swift-argument-parser `ParsableCommand`: its name and help
/// text as static members, parsing in the initialiser, and the work in ``run()``.
protocol Subcommand: Sendable {
    /// The word after `hostpin` that selects this subcommand.
    static var name: String { get }
    /// One line for the tool's help.
    static var abstract: String { get }
    /// The synopsis line, e.g. `hostpin lookup NAME... [options]`.
    static var usage: String { get }
    /// The full text for `--help`, `-h` and `hostpin help NAME`.
    static var help: String { get }

    /// Takes the subcommand's arguments from `parser`, validating everything that can be checked
    /// before any query is sent (host names, addresses, numbers, the environment).
    ///
    /// - Throws: ``UsageError`` naming the first problem.
    init(parsing parser: inout OptionParser) throws(UsageError)

    /// Does the work, printing results to standard output and errors to standard error.
    ///
    /// - Returns: The process's exit status (README.md, "Exit codes").
    func run() async -> ExitStatus

    /// Reports `error`, found while parsing, the command's own way and returns its exit status, or
    /// returns `nil` for the usual report (`hostpin: error: …`, exit 2).
    static func report(_ error: UsageError) -> ExitStatus?
}

extension Subcommand {
    static func report(_: UsageError) -> ExitStatus? { nil }
}
