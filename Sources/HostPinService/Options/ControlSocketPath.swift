import Foundation

/// Where the control socket is (`--control-socket PATH`, `listeners.control`): an absolute path, or a
/// bare file name, which is placed in the runtime directory — `$RUNTIME_DIRECTORY` (systemd sets it for
/// `RuntimeDirectory=`; the first one when it lists several), else `/run/hostpin`. `hostpin ctl` finds
/// the socket of a service run by systemd with no option at all: `control` in that directory.
package enum ControlSocketPath {
    /// The name `hostpin ctl` looks for when given no `--control-socket`.
    package static let defaultName = "control"
    /// The runtime directory when `RUNTIME_DIRECTORY` is not set.
    package static let fallbackDirectory = "/run/hostpin"
    /// The longest path a Unix socket address holds (`sun_path`, 108 octets with its NUL).
    package static let maximumLength = 107

    /// Why `text` cannot name the socket, or `nil`.
    package static func problem(with text: String) -> String? {
        if text.isEmpty { return "is empty" }
        if !text.hasPrefix("/") && text.contains("/") {
            return "is neither an absolute path nor a bare file name (placed in the runtime directory)"
        }
        if text.utf8.count > maximumLength { return "is longer than \(maximumLength) octets, the most a Unix socket path holds" }
        return nil
    }

    /// `--control-socket PATH` (serve, proxy, ctl): the last one, resolved; `nil` without one.
    ///
    /// - Throws: ``UsageError/invalidValue(option:reason:)`` for a path that cannot name the socket.
    package static func option(_ parser: inout OptionParser) throws(UsageError) -> String? {
        try parser.values("--control-socket") { text throws(UsageError) in
            if let problem = problem(with: text) { throw .invalidValue(option: "--control-socket", reason: "'\(text)' \(problem)") }
            return resolve(text)
        }.last
    }

    /// The help lines of `--control-socket` for `serve` and `proxy`.
    package static func helpLines(width: Int) -> String {
        let indent = String(repeating: " ", count: width + 2)
        let name = "--control-socket PATH"
        // On a line of its own when it fills the column (serve's is 21 wide, as the name).
        let first = name.count < width ? "  " + name.padding(toLength: width, withPad: " ", startingAt: 0) : "  " + name + "\n" + indent
        return first
            + "Answer 'hostpin ctl' (flush, stats, upstreams, status) on a Unix socket\n"
            + indent + "at PATH, mode 0600, for this user and root only; a bare file name goes in\n"
            + indent + "$RUNTIME_DIRECTORY, else \(fallbackDirectory). Off by default."
    }

    /// The socket's path for `text`.
    package static func resolve(_ text: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        guard !text.hasPrefix("/") else { return text }
        let runtime = environment["RUNTIME_DIRECTORY"]?.split(separator: ":").first.map(String.init) ?? ""
        return (runtime.hasPrefix("/") ? runtime : fallbackDirectory) + "/" + text
    }
}
