import Synchronization

/// Where one service's diagnostics go (where it listens, reloads, a cache file that could not be written,
/// a name found hijacked), at the level and in the format of its configuration (``LogOptions``). Each
/// ``Service`` has its own, so two services in one process log at their own levels; by default a line
/// goes to standard error (one `write(2)` per line, escaped: ``Console``).
public final class ServiceLog: Sendable {
    /// Receives each line written: its level and the line, already in the format in force (text,
    /// escaped, or one JSON object), without its newline.
    public typealias Sink = @Sendable (_ level: LogLevel, _ line: String) -> Void

    /// The level and format in force; a reload replaces them.
    private let settings: Mutex<(level: LogLevel, format: LogFormat)>
    private let sink: Sink

    /// A log at `level` in `format` that hands each line to `sink` (standard error when `nil`).
    public init(level: LogLevel = .info, format: LogFormat = .text, sink: Sink? = nil) {
        settings = Mutex((level, format))
        self.sink = sink ?? { _, line in Console.writeErrorLine(line) }
        followsConsole = false
    }

    /// The log the CLI's one-shot commands (`lookup`, `fetch`) write through: standard error, at the
    /// level and in the format ``Console`` has in force.
    package static let console = ServiceLog(sink: nil, followsConsole: true)

    private let followsConsole: Bool

    private init(sink: Sink?, followsConsole: Bool) {
        settings = Mutex((.info, .text))
        self.sink = sink ?? { _, line in Console.writeErrorLine(line) }
        self.followsConsole = followsConsole
    }

    /// Puts `level` and `format` in force for the lines written from now on.
    package func configure(level: LogLevel, format: LogFormat) {
        settings.withLock { $0 = (level, format) }
    }

    /// Writes `message` at `level`, unless the level in force leaves it out.
    public func log(_ level: LogLevel, _ message: String) {
        let (threshold, format) = current
        guard level <= threshold else { return }
        sink(level, format.line(level, message))
    }

    /// Writes `message` at level `error`, whatever the level in force.
    public func error(_ message: String) {
        sink(.error, current.format.line(.error, message))
    }

    private var current: (level: LogLevel, format: LogFormat) {
        followsConsole ? Console.logSettings : settings.withLock { $0 }
    }
}
