import Foundation
import HostPin

/// How diagnostics are written on standard error (`--log-format`): one line per event either way.
public enum LogFormat: String, CaseIterable, Sendable {
    /// The message itself (the default).
    case text
    /// JSON Lines: `{"level":"info","message":"listening on 127.0.0.1:53 (DNS over UDP and TCP)","time":"2026-12-01T10:40:00.123Z"}`,
    /// keys sorted, the time RFC 3339 in UTC to the millisecond.
    case json

    /// `message` at `level` as one line of this format (without the newline).
    public func line(_ level: LogLevel, _ message: String, at date: Date = Date()) -> String {
        switch self {
        case .text:
            return Console.escaped(message)
        case .json:
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let object = JSONValue.object(["level": .string(level.rawValue), "message": .string(message),
                                           "time": .string(formatter.string(from: date))])
            return String(decoding: object.jsonData(), as: UTF8.self)
        }
    }
}
