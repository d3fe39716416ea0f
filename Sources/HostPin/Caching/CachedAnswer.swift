/// What ``CachingResolver/cachedAnswer(_:family:)`` finds without waiting: a fresh positive entry read in
/// place, or an answer as a value (an IP literal, `localhost`, a special-use name, a fresh negative entry).
package enum CachedAnswer: Sendable {
    /// A fresh positive entry's addresses; nothing was allocated to read them.
    case addresses(CachedAddresses)
    /// Any other answer given without an upstream.
    case outcome(ResolutionOutcome)

    /// Seconds since the answer was received, on the cache's monotonic clock (``ResolutionOutcome/age``).
    package var age: UInt32 {
        switch self {
        case .addresses(let addresses): addresses.age
        case .outcome(let outcome): outcome.age
        }
    }

    /// The answer as ``CachingResolver/resolveDetailed(_:family:)`` returns it, a positive one carrying
    /// `name`. Allocates a positive answer's address array.
    package func outcome(name: HostName) -> ResolutionOutcome {
        switch self {
        case .addresses(let addresses):
            ResolutionOutcome(answer: .addresses(addresses.resolution(name: name)), ttlLeft: addresses.ttlLeft, age: addresses.age)
        case .outcome(let outcome): outcome
        }
    }
}
