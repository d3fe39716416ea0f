import Synchronization

/// The rules in force where they can be replaced while requests run (a reload): each request or query
/// reads ``current`` once when it starts and keeps that value to its end, so a replacement applies at
/// once to what starts afterwards and never changes a request half-way.
public final class LiveRules: Sendable {
    private let state: Mutex<(rules: Rules, generation: UInt64)>
    /// A copy of the generation in `state`, written under its lock, so ``generation`` is read without it.
    private let latestGeneration = Atomic<UInt64>(0)

    /// Starts with `rules`, generation 0.
    public init(_ rules: Rules = Rules()) {
        state = Mutex((rules, 0))
    }

    /// The rules in force.
    public var current: Rules { state.withLock { $0.rules } }

    /// The rules in force and their generation, read together: something derived from these rules
    /// (a stub's kept answer) stays valid while ``generation`` still returns this number.
    public var versioned: (rules: Rules, generation: UInt64) { state.withLock { $0 } }

    /// How many times the rules were replaced: 0 at the start, one more per ``replace(with:)``. An atomic
    /// load, cheap enough for every cache hit.
    public var generation: UInt64 { latestGeneration.load(ordering: .acquiring) }

    /// Puts `rules` in force from now on.
    public func replace(with rules: Rules) {
        state.withLock { state in
            state.rules = rules
            state.generation &+= 1
            latestGeneration.store(state.generation, ordering: .releasing)
        }
    }
}
