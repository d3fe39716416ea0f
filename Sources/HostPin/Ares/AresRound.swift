#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One round of a c-ares channel's owner thread: the work between two `poll(2)` sleeps (sending what was
/// submitted, then every reply that was ready, each callback in turn), and the actions put off until it
/// ends (``afterCurrent(_:)``).
///
/// A consumer fed one outcome per reply would otherwise be woken once per reply; deferring its wake-up to
/// the end of the round wakes it once per round, for every outcome the round produced.
final class AresRound {
    private var deferred: [@Sendable () -> Void] = []

    /// The round the calling thread is in, or `nil` on any thread that is not a channel's owner thread
    /// inside a round.
    static var current: AresRound? {
        guard let key, let pointer = pthread_getspecific(key) else { return nil }
        return Unmanaged<AresRound>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Runs `action` when the caller's round ends, or at once when the caller is not in one.
    static func afterCurrent(_ action: @escaping @Sendable () -> Void) {
        guard let round = current else { return action() }
        round.deferred.append(action)
    }

    /// Runs `body` as a round on the calling thread, then the actions deferred to its end, outside it (an
    /// action that defers another runs it at once).
    func run(_ body: () -> Void) {
        guard let key = Self.key else { return body() }
        pthread_setspecific(key, Unmanaged.passUnretained(self).toOpaque())
        body()
        pthread_setspecific(key, nil)
        guard !deferred.isEmpty else { return }
        var actions: [@Sendable () -> Void] = []
        swap(&actions, &deferred)
        for action in actions { action() }
        actions.removeAll(keepingCapacity: true)
        if deferred.isEmpty { swap(&actions, &deferred) }
    }

    /// The thread-specific slot holding the round a thread is in (not owned: ``run(_:)`` outlives it);
    /// `nil` when the process has no slot left, and then nothing is deferred.
    private static let key: pthread_key_t? = {
        var key = pthread_key_t()
        return pthread_key_create(&key, nil) == 0 ? key : nil
    }()
}
