/// What the trusted resolver does with DNSSEC signatures (RFC 4033 §5, RFC 4035 §4, §5).
public enum DNSSECMode: String, Sendable, Hashable, CaseIterable {
    /// Validate every answer; a bogus one is never handed out, pinned or cached as an answer: the next
    /// trusted upstream is asked, and when none gives a valid answer the resolution fails with
    /// ``ResolutionError/dnssecBogus(_:)``.
    case validate
    /// Validate, mark (``DNSSECStatus/bogus(_:)``) and count, but hand a bogus answer out anyway: for
    /// rolling validation out.
    case report
    /// No validation: answers are as trustworthy as the channel and the upstream that carried them.
    case off
}
