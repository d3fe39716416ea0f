/// Names one rule: its place in the file and what it says, as errors and decisions show it.
public struct RuleReference: Sendable, Hashable, CustomStringConvertible {
    /// The rule's index in the `rules` array, from 0.
    public let index: Int
    /// The rule in short: `block host ads.example.test`, `redirect urlPrefix http://cdn.example.test/old/`.
    public let summary: String

    /// The key path of the rule, `rules[3]`.
    public var keyPath: String { "rules[\(index)]" }

    /// `rules[3] (block host ads.example.test)`.
    public var description: String { "\(keyPath) (\(summary))" }
}
