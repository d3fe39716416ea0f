import Foundation

/// Where the control socket is (`--control-socket PATH`, `listeners.control`): an absolute path, or a
/// bare file name, which is placed in the runtime directory — `$RUNTIME_DIRECTORY` (systemd sets it for
/// `RuntimeDirectory=`; the first one when it lists several), else `/run/hostpin`. `hostpin ctl` finds
/// the socket of a service run by systemd with no option at all: `control` in that directory.
enum ControlSocketPath {
    /// The name `hostpin ctl` looks for when given no `--control-socket`.
    static let defaultName = "control"
    /// The runtime directory when `RUNTIME_DIRECTORY` is not set.
    static let fallbackDirectory = "/run/hostpin"
    /// The longest path a Unix socket address holds (`sun_path`, 108 octets with its NUL).
    static let maximumLength = 107

    /// Why `text` cannot name the socket, or `nil`.
    static func problem(with text: String) -> String? {
        if text.isEmpty { return "is empty" }
        if !text.hasPrefix("/") && text.contains("/") {
            return "is neither an absolute path nor a bare file name (placed in the runtime directory)"
        }
        if text.utf8.count > maximumLength { return "is longer than \(maximumLength) octets, the most a Unix socket path holds" }
        return nil
    }

    /// The socket's path for `text`.
    static func resolve(_ text: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        guard !text.hasPrefix("/") else { return text }
        let runtime = environment["RUNTIME_DIRECTORY"]?.split(separator: ":").first.map(String.init) ?? ""
        return (runtime.hasPrefix("/") ? runtime : fallbackDirectory) + "/" + text
    }
}
