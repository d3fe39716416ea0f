import Synchronization

/// The rules in force where they can be replaced while requests run (a reload): each request or query
/// reads ``current`` once when it starts and keeps that value to its end, so a replacement applies at
/// once to what starts afterwards and never changes a request half-way.
public final class LiveRules: Sendable {
    private let rules: Mutex<Rules>

    /// Starts with `rules`.
    public init(_ rules: Rules = Rules()) {
        self.rules = Mutex(rules)
    }

    /// The rules in force.
    public var current: Rules { rules.withLock { $0 } }

    /// Puts `rules` in force from now on.
    public func replace(with rules: Rules) {
        self.rules.withLock { $0 = rules }
    }
}
