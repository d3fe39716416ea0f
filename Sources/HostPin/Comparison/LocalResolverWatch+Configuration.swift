extension LocalResolverWatch {
    /// How often a ``LocalResolverWatch`` compares, how much it queues, and how it judges.
    public struct Configuration: Sendable, Hashable {
        /// At most one comparison per name per this long (whatever the family). Default: 1 hour.
        /// Zero or negative: no limit per name.
        public var nameInterval: Duration = .seconds(3600)
        /// At most one comparison per this long over all names. Default: 1 second (one comparison per
        /// second). Zero or negative: no overall limit.
        public var overallInterval: Duration = .seconds(1)
        /// The most comparisons waiting for the worker; an answer offered while it is full is dropped
        /// (and counted, ``Statistics/dropped``). Default: 16; at least 1.
        public var queueCapacity = 16
        /// The detector's settings: ordinary ranges and known hijack addresses. Default: every RFC 6890
        /// block special, no known list.
        public var detector = HijackDetector()
        /// Whether the wildcard probe runs when the local answer has addresses the trusted one does not
        /// (``WildcardProbe``: a random name beside the compared one, asked of both sides). Default: true.
        public var probesWildcard = true

        /// The defaults above.
        public init() {}
    }
}
