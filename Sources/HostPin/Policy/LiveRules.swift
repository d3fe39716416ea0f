import Synchronization

/// The rules in force where they can be replaced while requests run (a reload): each request or query
/// reads ``current`` once when it starts and keeps that value to its end, so a replacement applies at
/// once to what starts afterwards and never changes a request half-way.
public final class LiveRules: Sendable {
    private let rules: Mutex<Rules>
    /// Counted under `rules`' lock, after the rules are replaced: whoever reads ``generation`` before
    /// ``current`` never pairs a new number with old rules.
    private let replacements = Atomic<UInt64>(0)

    /// Starts with `rules`, generation 0.
    public init(_ rules: Rules = Rules()) {
        self.rules = Mutex(rules)
    }

    /// The rules in force.
    public var current: Rules { rules.withLock { $0 } }

    /// How many times the rules were replaced: 0 at the start, one more per ``replace(with:)``. An atomic
    /// load, cheap enough for every cache hit: something derived from the rules (a stub's kept answer)
    /// stays valid while this still returns the number read before the rules were.
    public var generation: UInt64 { replacements.load(ordering: .acquiring) }

    /// Puts `rules` in force from now on.
    public func replace(with rules: Rules) {
        self.rules.withLock { current in
            current = rules
            replacements.add(1, ordering: .releasing)
        }
    }
}
