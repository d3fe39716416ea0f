/// How much a long-running command (`serve`, `proxy`) says on standard error (`--log-level`): each level
/// includes the ones before it.
public enum LogLevel: String, CaseIterable, Comparable, Sendable {
    /// What stopped something: a listener that cannot start, a resolver that cannot be set up.
    case error
    /// What an operator should look at: a reload refused, a name found hijacked, a damaged cache file.
    case warning
    /// What the service does: where it listens, reloads, pre-resolving, the watch's summary. The default.
    case info
    /// Each control request besides.
    case debug

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
