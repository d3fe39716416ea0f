extension LocalResolverWatch {
    /// What became of one answer offered to a ``LocalResolverWatch``.
    public enum Decision: Sendable, Hashable {
        /// Queued: the worker will compare it.
        case queued
        /// Its name was compared within ``Configuration/nameInterval``.
        case recentlyCompared
        /// Another answer was queued within ``Configuration/overallInterval``.
        case rateLimited
        /// The queue was full; the answer was dropped.
        case queueFull
        /// Not a trusted upstream's answer (the untrusted fallback's, a stale or literal one), or the
        /// watch has stopped.
        case notCompared
    }
}
