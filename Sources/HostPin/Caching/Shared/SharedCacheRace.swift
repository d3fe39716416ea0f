import Synchronization

/// One miss's race between the shared cache and the upstreams: the store is asked first; the upstreams
/// when it answers without a valid value, or when ``SharedCache/patience`` runs out before the store's
/// reply is in (a reply in but still being read, behind others of its pipelined batch, is waited for:
/// the patience bounds Redis, not this process's own work); the first
/// valid answer wins and `finish` gets it, exactly once. An upstream answer that comes after a shared one
/// is dropped (the upstream was asked only because the store was slow).
final class SharedCacheRace: Sendable {
    private struct State {
        var finished = false
        var upstreamAsked = false
        /// The store's reply is in (being read): the patience no longer runs.
        var storeAnswered = false
    }

    private let state = Mutex(State())
    private let askUpstream: @Sendable (@escaping @Sendable (Result<ResolutionOutcome, ResolutionError>) -> Void) -> Void
    private let shared: @Sendable (ResolutionOutcome.Answer) -> Result<ResolutionOutcome, ResolutionError>
    private let upstream: @Sendable (Result<ResolutionOutcome, ResolutionError>) -> Result<ResolutionOutcome, ResolutionError>
    private let finish: @Sendable (Result<ResolutionOutcome, ResolutionError>) -> Void

    /// - Parameters:
    ///   - askUpstream: Asks the upstreams, handing their result to its argument.
    ///   - shared: Keeps a shared answer (in memory) and makes the outcome the waiters get.
    ///   - upstream: Settles the upstreams' result (kept in memory and in the shared cache).
    ///   - finish: Gets the winner.
    init(askUpstream: @escaping @Sendable (@escaping @Sendable (Result<ResolutionOutcome, ResolutionError>) -> Void) -> Void,
         shared: @escaping @Sendable (ResolutionOutcome.Answer) -> Result<ResolutionOutcome, ResolutionError>,
         upstream: @escaping @Sendable (Result<ResolutionOutcome, ResolutionError>) -> Result<ResolutionOutcome, ResolutionError>,
         finish: @escaping @Sendable (Result<ResolutionOutcome, ResolutionError>) -> Void) {
        self.askUpstream = askUpstream
        self.shared = shared
        self.upstream = upstream
        self.finish = finish
    }

    /// Starts the race for `name` and `family` in `cache`.
    func run(_ cache: SharedCache, name: HostName, family: AddressFamily) {
        cache.lookup(name, family: family, arrived: { [self] in
            state.withLock { $0.storeAnswered = true }
        }) { [self] answer in
            // Decide under the lock, act after it.
            enum Action { case none, keepShared(ResolutionOutcome.Answer), askUpstream }
            let action: Action = state.withLock { state in
                guard !state.finished else { return .none }
                if let answer {
                    state.finished = true
                    return .keepShared(answer)
                }
                guard !state.upstreamAsked else { return .none }
                state.upstreamAsked = true
                return .askUpstream
            }
            switch action {
            case .none: break
            case .keepShared(let answer): finish(shared(answer))
            case .askUpstream: startUpstream()
            }
        }
        cache.timer.after(cache.patience) { [self] in
            let ask = state.withLock { state in
                guard !state.finished, !state.upstreamAsked, !state.storeAnswered else { return false }
                state.upstreamAsked = true
                return true
            }
            if ask {
                cache.metrics.recordLate()
                startUpstream()
            }
        }
    }

    private func startUpstream() {
        askUpstream { [self] received in
            let first = state.withLock { state in
                guard !state.finished else { return false }
                state.finished = true
                return true
            }
            if first { finish(upstream(received)) }
        }
    }
}
