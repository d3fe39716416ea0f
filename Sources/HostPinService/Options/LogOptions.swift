import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The logging options of the long-running commands: `--log-level`, `--log-format` (diagnostics on
/// standard error) and `--access-log FILE` (the proxy's access log, on standard output without it).
/// No log holds a request's headers: the access log has no header at all, and a request-target with
/// user information (`http://user:password@host/`) is refused before it is logged (README.md, "Logs").
public struct LogOptions: Sendable, Equatable {
    /// What is said: each level with those before it.
    public var level: LogLevel
    /// Text or JSON Lines.
    public var format: LogFormat
    /// Where the proxy's access log is appended; `nil`: standard output.
    public var accessLog: String?

    /// Diagnostics at `level` in `format`; the proxy's access log appended to `accessLog`, or on standard
    /// output when `nil`.
    public init(level: LogLevel = .info, format: LogFormat = .text, accessLog: String? = nil) {
        self.level = level
        self.format = format
        self.accessLog = accessLog
    }

    /// Takes the options from `parser`.
    ///
    /// - Throws: ``UsageError/invalidValue(option:reason:)`` for a level or format that is not one of
    ///   the choices, an empty access log path or one whose folder cannot be written.
    package init(parsing parser: inout OptionParser) throws(UsageError) {
        level = try Self.choice(&parser, "--log-level", LogLevel.self) ?? .info
        format = try Self.choice(&parser, "--log-format", LogFormat.self) ?? .text
        accessLog = try parser.values("--access-log") { path throws(UsageError) in
            guard !path.isEmpty else { throw .invalidValue(option: "--access-log", reason: "the file name is empty") }
            if let reason = FileAccess.unwritableFolder(of: path) {
                throw .unreadableFile(option: "--access-log", path: path, reason: reason)
            }
            return path
        }.last
    }

    private static func choice<Choice: RawRepresentable & CaseIterable>(_ parser: inout OptionParser, _ option: String,
                                                                        _ type: Choice.Type) throws(UsageError) -> Choice?
        where Choice.RawValue == String
    {
        try parser.values(option) { text throws(UsageError) in
            guard let choice = Choice(rawValue: text) else {
                throw .invalidValue(option: option, reason: "'\(text)' is not one of "
                                    + Choice.allCases.map(\.rawValue).joined(separator: ", "))
            }
            return choice
        }.last
    }

    /// Puts the level and the format in force for every diagnostic `log` writes from now on.
    package func apply(to log: ServiceLog) {
        log.configure(level: level, format: format)
    }

    /// Opens the access log: `--access-log FILE` appended to (created with mode 0640), else standard
    /// output.
    ///
    /// - Returns: The descriptor, or why the file cannot be opened.
    package func openAccessLog() -> Result<Int32, AccessLogFileError> {
        guard let accessLog else { return .success(STDOUT_FILENO) }
        let descriptor = open(accessLog, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640)
        guard descriptor >= 0 else { return .failure(AccessLogFileError(path: accessLog, reason: String(cString: strerror(errno)))) }
        return .success(descriptor)
    }

    /// The help lines, the option column `width` wide.
    package static func helpLines(width: Int) -> String {
        let indent = String(repeating: " ", count: width + 2)
        func option(_ name: String) -> String {
            name.count < width ? "  " + name.padding(toLength: width, withPad: " ", startingAt: 0) : "  " + name + "\n" + indent
        }
        return option("--log-level LEVEL") + "error, warning, info (default) or debug: what is said on standard\n"
            + indent + "error, each level with those before it.\n"
            + option("--log-format FORMAT") + "text (default) or json: one JSON object per line on standard error\n"
            + indent + "(level, message, time).\n"
            + option("--access-log FILE") + "Append the proxy's access log to FILE (created with mode 0640)\n"
            + indent + "instead of writing it on standard output."
    }
}

/// The access log file could not be opened.
public struct AccessLogFileError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let reason: String

    public var description: String { "--access-log: cannot open \(path): \(reason)" }
}
