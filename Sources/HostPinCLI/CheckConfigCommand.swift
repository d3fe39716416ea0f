import Foundation
import HostPinService

/// `hostpin check-config FILE`: reads and validates a configuration file as `--config` would, then prints
/// the configuration in force — each key's value from the file, else its default — or every problem.
struct CheckConfigCommand: Subcommand {
    static let name = "check-config"
    static let abstract = "Validate a configuration file and print the configuration it gives."
    static let usage = "hostpin check-config FILE"
    static var help: String {
        """
        OVERVIEW: \(abstract)

        USAGE: \(usage)

        ARGUMENTS:
          FILE                 A configuration file (JSON; README.md, "Configuration file"), as
                               --config takes it for lookup, fetch, proxy, serve and ctl.

        OUTPUT:
          The configuration in force on standard output, as one JSON object with sorted keys: every
          key, with the file's value or the default (null: none). The files it names are checked as
          they will be used: upstreams.caFile must hold a PEM certificate, the folder of cache.file
          must be writable, the rules must load.
          A bad file prints every problem on standard error, one per line, at its key path:
            hostpin: error: FILE: upstreams.servers[1]: '8.8.8.8:99999' has no valid port (1-65535)

        EXIT STATUS:
        \(ExitStatus.success.helpLine(meaning: "the file is valid"))
        \(ExitStatus.usage.helpLine(meaning: "the file cannot be read, is not JSON, or has problems (each listed)"))
        """
    }

    /// The file, read and valid.
    let file: ConfigFile

    init(parsing parser: inout OptionParser) throws(UsageError) {
        let texts = parser.positionals()
        try parser.finish()
        guard let path = texts.first else { throw .missingArgument("FILE (the configuration file to check)") }
        if texts.count > 1 { throw .unexpectedArgument(texts[1]) }
        do throws(ConfigError) {
            file = try ConfigFile.load(path)
        } catch {
            throw .config(error)
        }
    }

    func run() async -> ExitStatus {
        let text = String(decoding: file.effective.jsonData(pretty: true), as: UTF8.self)
        _ = Console.out(text)  // a failed write is the exit status Console.finish gives
        return .success
    }
}
