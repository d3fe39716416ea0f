import HostPin

/// What a configuration file (`--config`) gives for the options of one subcommand: each value as the
/// command line would write it. ``OptionParser`` uses an option's values here only when the command line
/// gives that option nowhere, so every option on the command line wins over the file, a repeatable one
/// included (its values replace the file's; they are not added to them).
package struct OptionDefaults: Sendable {
    /// Values by option name (`--server`: every upstream, in order).
    package var values: [String: [String]] = [:]
    /// The flags the file turns on (`--allow-remote`). A flag the file turns on cannot be turned off on
    /// the command line: change the file.
    package var flags: Set<String> = []
    /// The embedded rules; `--rules FILE` replaces them.
    package var rules: Rules?
    /// `cache.preresolve`; `--preresolve FILE` replaces them.
    package var preresolve: [HostName]?
}
