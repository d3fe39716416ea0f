import Foundation
import HostPin
import HostPinService

/// The `hostpin` tool: reads the subcommand, prints help or the version, or parses and runs a
/// subcommand, then exits with its ``ExitStatus``.
///
/// An `@main` type rather than `main.swift`: top-level code in `main.swift` runs on the main actor with
/// globals that C callbacks cannot reach safely (a `@convention(c)` callback declared there is main-actor isolated).
@main
enum HostPinCommand {
    /// The version `--version` prints.
    static let version = "0.1.0"

    /// What `--version` prints, one item a line: `hostpin 0.1.0` first (tests and the User-Agent read it),
    /// then the commit built from (recorded by Plugins/BuildCommit; `unknown` outside git) and the
    /// versions of the C libraries as they report themselves at run time.
    static var versionText: String {
        """
        hostpin \(version)
        commit \(BuildCommit.id)
        c-ares \(LibraryVersions.cAres)
        ldns \(LibraryVersions.ldns)
        libcurl \(LibraryVersions.libcurl)
        """
    }

    /// Every subcommand, in the order help lists them. Computed: metatype arrays need not be shared.
    static var subcommands: [any Subcommand.Type] {
        [LookupCommand.self, CompareCommand.self, FetchCommand.self, ProxyCommand.self, ServeCommand.self, CtlCommand.self,
         CheckConfigCommand.self]
    }

    /// The tool's own help text.
    static var help: String {
        let width = (subcommands.map { $0.name } + ["help"]).map(\.count).max() ?? 0
        let rows = subcommands.map { ($0.name, $0.abstract) } + [("help", "Show help for a subcommand: hostpin help lookup.")]
        return """
            OVERVIEW: Resolve host names through trusted DNS servers only, detect DNS hijacking, and fetch
            URLs from the addresses those servers give.

            USAGE: hostpin <subcommand> [options]

            SUBCOMMANDS:
            \(rows.map { "  \($0.0.padding(toLength: width, withPad: " ", startingAt: 0))   \($0.1)" }.joined(separator: "\n"))

            OPTIONS:
              -h, --help   Show this help.
              --version    Print the version, the commit built from and the c-ares, ldns and libcurl
                           versions in use, one per line.
              --generate-manual hostpin.1|hostpin.json.5
                           Print a manual page (man(7) source) made from these help texts.
              --generate-completion-script bash
                           Print the bash completion script (subcommands, options, fixed values).

            \(UpstreamSelection.helpSection)

            EXIT STATUS:
            \(ExitStatus.allCases.map(\.helpLine).joined(separator: "\n"))

            See 'hostpin <subcommand> --help' for a subcommand's options.
            """
    }

    static func main() async {
        Console.prepareStandardStreams()
        let status = Console.finish(await run(Array(CommandLine.arguments.dropFirst())))
        // exit() runs OpenSSL's atexit cleanup, which frees what a libcurl thread still inside a handshake
        // uses: stop and join them first (each needs one turn of its loop: milliseconds, up to a second for
        // a large CA file being loaded). Should one outlast the grace, _exit skips every atexit handler
        // (the output is flushed already). See docs/ARCHITECTURE.md, "Exit".
        guard CurlThreads.process.shutDown(within: CurlThreads.exitGrace) else { _exit(status.rawValue) }
        exit(status.rawValue)
    }

    /// Dispatches `arguments` (without the program name) and returns the exit status.
    static func run(_ arguments: [String]) async -> ExitStatus {
        guard let first = arguments.first else { return fail(.missingSubcommand, helpCommand: "hostpin --help") }
        switch first {
        case "-h", "--help":
            Console.out(help)
            return .success
        case "--version":
            Console.out(versionText)
            return .success
        case "help":
            return showHelp(for: Array(arguments.dropFirst()))
        case "--generate-manual", "--generate-completion-script":
            return generate(first, Array(arguments.dropFirst()))
        default:
            guard let command = subcommands.first(where: { $0.name == first }) else {
                let known = subcommands.map { $0.name }
                return fail(first.hasPrefix("-") ? .unknownOption(first) : .unknownSubcommand(first, subcommands: known),
                            helpCommand: "hostpin --help")
            }
            return await run(command, Array(arguments.dropFirst()))
        }
    }

    /// Parses and runs one subcommand; `-h`/`--help` anywhere before `--` shows its help instead.
    private static func run(_ command: any Subcommand.Type, _ arguments: [String]) async -> ExitStatus {
        var parser = OptionParser(arguments)
        if parser.contains(anyOf: "-h", "--help") {
            Console.out(command.help)
            return .success
        }
        do throws(UsageError) {
            let parsed = try command.init(parsing: &parser)
            return await parsed.run()
        } catch {
            return command.report(error) ?? fail(error, helpCommand: "hostpin \(command.name) --help")
        }
    }

    /// `hostpin help [SUBCOMMAND]`: the same text as `--help`.
    private static func showHelp(for arguments: [String]) -> ExitStatus {
        guard let name = arguments.first else {
            Console.out(help)
            return .success
        }
        guard arguments.count == 1 else { return fail(.unexpectedArgument(arguments[1]), helpCommand: "hostpin --help") }
        guard let command = subcommands.first(where: { $0.name == name }) else {
            return fail(.unknownSubcommand(name, subcommands: subcommands.map { $0.name }), helpCommand: "hostpin --help")
        }
        Console.out(command.help)
        return .success
    }

    /// The manual pages (`hostpin.1`, `hostpin.json.5`) and the bash completion script, made from the
    /// help texts, on standard output (scripts/package installs them). A page is dated by
    /// `SOURCE_DATE_EPOCH` when set (reproducible builds), else today (UTC).
    private static func generate(_ option: String, _ arguments: [String]) -> ExitStatus {
        guard let value = arguments.first else { return fail(.missingValue(option: option), helpCommand: "hostpin --help") }
        guard arguments.count == 1 else { return fail(.unexpectedArgument(arguments[1]), helpCommand: "hostpin --help") }
        let epoch = ProcessInfo.processInfo.environment["SOURCE_DATE_EPOCH"].flatMap(TimeInterval.init)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        let date = formatter.string(from: epoch.map { Date(timeIntervalSince1970: $0) } ?? Date())
        let text: String
        switch (option, value) {
        case ("--generate-manual", "hostpin.1"): text = ManualPage.hostpin(date: date)
        case ("--generate-manual", "hostpin.json.5"): text = ConfigManualPage.page(date: date)
        case ("--generate-completion-script", "bash"): text = BashCompletion.script
        case ("--generate-manual", _):
            return fail(.invalidValue(option: option, reason: "'\(value)' is not one of hostpin.1, hostpin.json.5"),
                        helpCommand: "hostpin --help")
        default:
            return fail(.invalidValue(option: option, reason: "'\(value)' is not bash, the one shell it writes for"),
                        helpCommand: "hostpin --help")
        }
        Console.out(String(text.dropLast()))   // each ends with its newline; out adds one
        return .success
    }

    /// Reports a usage error the way swift-argument-parser does, on standard error.
    private static func fail(_ error: UsageError, helpCommand: String) -> ExitStatus {
        for line in error.lines { Console.error("hostpin: error: \(line)") }
        Console.error("See '\(helpCommand)'.")
        return .usage
    }
}
