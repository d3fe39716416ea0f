/// `--config FILE` (`lookup`, `fetch`, `proxy`, `serve`, `ctl`): a configuration file (README.md,
/// "Configuration file") read and validated whole while the command line is parsed, whose values stand in
/// for every option the command line does not give.
package enum ConfigOption {
    /// The option's help lines, for a help text whose option column is `width` wide.
    package static func helpLines(width: Int) -> String {
        let indent = String(repeating: " ", count: width + 2)
        return "  " + "--config FILE".padding(toLength: width, withPad: " ", startingAt: 0)
            + "Take each option not given here from FILE (JSON; see README.md,\n"
            + indent + "\"Configuration file\"). A bad file is a usage error (2) listing every\n"
            + indent + "problem at its key path."
    }

    /// Takes `--config` from `parser` and, when one is given, makes the file's values for `command` the
    /// parser's defaults. Call it before any other option is taken.
    ///
    /// - Returns: The file's path, or `nil` without `--config`.
    /// - Throws: ``UsageError/config(_:)`` with every problem of the file.
    @discardableResult
    package static func apply(to parser: inout OptionParser, command: String) throws(UsageError) -> String? {
        guard let path = try parser.values("--config", { $0 }).last else { return nil }
        do throws(ConfigError) {
            parser.use(try ConfigFile.load(path).defaults(for: command))
        } catch {
            throw .config(error)
        }
        return path
    }
}
