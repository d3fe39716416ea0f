extension LocalResolverWatch {
    /// What a ``LocalResolverWatch`` has done since it was made: every answer offered ends in exactly one
    /// of the first five counts, and every comparison finished in one of the three verdicts.
    public struct Statistics: Sendable, Hashable {
        /// Answers queued for comparison.
        public var queued = 0
        /// Answers skipped because their name was compared within ``Configuration/nameInterval``.
        public var recentlyCompared = 0
        /// Answers skipped because another was queued within ``Configuration/overallInterval``.
        public var rateLimited = 0
        /// Answers dropped because the queue was full (``Configuration/queueCapacity``).
        public var dropped = 0
        /// Answers not compared because they are not the trusted upstreams' (the untrusted fallback's,
        /// stale ones, IP literals), or came after ``LocalResolverWatch/stop()``.
        public var notCompared = 0
        /// Comparisons that found the local answer consistent.
        public var consistent = 0
        /// Comparisons that found it hijacked.
        public var hijacked = 0
        /// Comparisons that found it neither (different public addresses, a local failure, …).
        public var inconclusive = 0
        /// Distinct names found hijacked, each reported once.
        public var hijackedNames = 0

        public init() {}

        /// Comparisons finished.
        public var compared: Int { consistent + hijacked + inconclusive }
    }
}
