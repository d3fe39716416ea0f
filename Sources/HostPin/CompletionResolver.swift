/// A resolver that can resolve without a task to wait in: the upstream a ``CachingResolver`` asks on its
/// callback path (``CachingResolver/resolveDetailed(_:family:countingLookup:completion:)``), so a miss
/// leading a flight costs the cache no task. ``TrustedResolver`` is one; so is the serve command's
/// switch between trusted resolvers.
package protocol CompletionResolver: HostResolver {
    /// Resolves `name` as ``HostResolver/resolveDetailed(_:family:)`` does; `completion` gets what that
    /// returns or throws (never `.cancelled`: nothing but the budget ends it early), on the thread that
    /// ends the resolution. `completion` must not block.
    func resolveDetailed(_ name: HostName, family: AddressFamily,
                         completion: @escaping @Sendable (Result<ResolutionOutcome, ResolutionError>) -> Void)
}

extension TrustedResolver: CompletionResolver {}
