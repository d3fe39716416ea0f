import Synchronization

/// A ``HostResolver`` that answers from a ``ResolutionCache`` and asks its upstream resolver only on a miss,
/// once per name and family however many callers miss together (single-flight).
///
/// - Fresh hits, positive or negative, return without suspending on anything but the cache lock.
/// - Negative answers (NXDOMAIN, NODATA) with an SOA record are cached for the smaller of its TTL and
///   MINIMUM (RFC 2308 §5), capped by ``ResolutionCache/Limits/maximumNegativeTTL``; failures are shared
///   with the callers waiting at that moment but never cached.
/// - Serve-stale (RFC 8767): when every upstream fails or the time budget runs out, an expired answer
///   kept for at most ``ResolutionCache/Policy/maximumStale`` is returned instead of the error, with
///   source ``Resolution/Source/stale`` and every TTL ``ResolutionCache/Policy/staleTTL``; so is it when
///   the upstreams have not answered within ``ResolutionCache/Policy/staleAnswerTimeout`` (RFC 8767 §5's
///   client response timer, 1.8 s), while the resolution goes on in the background and updates the cache
///   when it succeeds. Once an upstream failure has been seen,
///   the name is answered stale at once, and refreshed in the background at most once per
///   ``ResolutionCache/Policy/refreshRetryInterval``, one refresh at a time, until an upstream answers
///   again or the entry is too old. An NXDOMAIN or NODATA from an upstream replaces the entry: a stale
///   answer never hides it. A trusted stale answer is also preferred to one from the untrusted fallback.
/// - Refresh-ahead: a positive entry used after ``ResolutionCache/Policy/refreshAhead`` of its lifetime is
///   refreshed in the background, one refresh per name at a time; the caller gets the cached answer at
///   once, and a refresh that fails leaves the entry as it was. The check on a hit is one comparison made
///   under the cache lock the lookup holds anyway.
public final class CachingResolver: HostResolver {
    /// The resolver asked on a miss, e.g. a ``TrustedResolver``.
    public let upstream: any HostResolver
    /// The cache consulted first; its ``ResolutionCache/policy`` sets serve-stale and refresh-ahead.
    public let cache: ResolutionCache
    /// The second level, asked on a miss before (and, after its patience, beside) `upstream`, and given
    /// every answer `upstream` sends; `nil` without one. A hit in `cache` never reaches it.
    public let shared: SharedCache?
    /// The resolutions running, one per name and family; each is removed when it completes, so the
    /// table holds no more than the distinct names being resolved at once.
    private let flights = Mutex<[ResolutionCache.Key: Flight<ResolutionOutcome>]>([:])

    /// Asks ``upstream``: a special-use name its routes take is resolved, and cached, as any other.
    public func routesSpecialUse(_ name: HostName) -> Bool { upstream.routesSpecialUse(name) }

    /// Asks ``upstream``'s routes.
    public func allowsPrivateAddresses(for name: HostName) -> Bool { upstream.allowsPrivateAddresses(for: name) }

    /// Asks ``upstream``'s routes.
    public func servesStale(_ name: HostName) -> Bool { upstream.servesStale(name) }

    /// Puts `cache` in front of `upstream`, and `shared` between them when given.
    public init(upstream: any HostResolver, cache: ResolutionCache = ResolutionCache(), shared: SharedCache? = nil) {
        self.upstream = upstream
        self.cache = cache
        self.shared = shared
    }

    /// Returns the cached resolution for `name` and `family` while it is fresh (source
    /// ``Resolution/Source/cache``, TTL and `receivedAt` as first received), otherwise resolves through
    /// `upstream` (joining a resolution already running for the same key) and caches a positive answer
    /// for its TTL, a negative one for its SOA's negative TTL; when the upstream fails, or has not answered
    /// within ``ResolutionCache/Policy/staleAnswerTimeout``, an expired answer may be served stale (source
    /// ``Resolution/Source/stale``).
    ///
    /// - Throws: ``ResolutionError/nxdomain(_:)`` and ``ResolutionError/nodata(_:_:)`` from the upstream or
    ///   the cache; what `upstream` throws, shared by every caller that waited for the same resolution,
    ///   when no stale answer may stand in; ``ResolutionError/cancelled`` for a caller whose task was
    ///   cancelled (the others still get the answer).
    ///
    /// Runs on the caller's executor (`nonisolated(nonsending)`, SE-0461) until it waits for an upstream:
    /// a fresh hit hops to no other executor and back (the hop's executor checks were a tenth of a hot hit).
    nonisolated(nonsending) public func resolve(_ name: HostName, family: AddressFamily) async throws(ResolutionError) -> Resolution {
        // An IP literal, `localhost`, or a special-use name (``SpecialUseName``): no cache, no upstream.
        if name.mayBeAnsweredLocally, let local = ResolutionOutcome.literal(for: name, family: family, routing: upstream) {
            return try local.get()
        }
        let now = cache.now()
        switch cache.freshHit(name, family: family, now: now, claimingRefresh: true) {
        case .addresses(let addresses, let generation):
            if let generation { refresh(name, family: family, generation: generation, now: now) }
            return addresses.resolution(name: name)
        case .negative(let rare):
            if let negative = rare.negative { throw negative.error }
        case .miss:
            break
        }
        // A second look, not counted: what the miss path needs (an expired entry), or a store that ran
        // since the first.
        let found = cache.find(name, family: family, now: now, counting: false, claimingRefresh: true)
        if case .fresh(let entry) = found {
            if entry.refreshClaimed { refresh(name, family: family, generation: entry.generation, now: now) }
            switch entry.answer {
            case .addresses(let resolution): return resolution
            case .negative(let negative): throw negative.error
            }
        }
        return try await resolveMissing(name, family: family, found: found, now: now).get()
    }

    /// The fresh cached addresses for `name` and `family`, read in place (nothing is allocated), or `nil`
    /// when ``resolve(_:family:)`` would not answer from a fresh positive entry: an IP literal,
    /// `localhost` or a special-use name (answered by `resolve` itself), a negative entry, an expired one,
    /// none. A hit is counted and claims a due refresh-ahead exactly as `resolve`'s does; a miss is not
    /// counted: the caller resolves the name next, and that counts it. Never waits and never asks an
    /// upstream.
    public func cachedAddresses(_ name: HostName, family: AddressFamily) -> CachedAddresses? {
        if name.mayBeAnsweredLocally, ResolutionOutcome.literal(for: name, family: family, routing: upstream) != nil { return nil }
        let now = cache.now()
        guard case .addresses(let addresses, let generation) = cache.freshHit(name, family: family, now: now, claimingRefresh: true,
                                                                              positiveOnly: true)
        else { return nil }
        if let generation { refresh(name, family: family, generation: generation, now: now) }
        return addresses
    }

    /// Resolves `name` as ``resolve(_:family:)`` does, returning NXDOMAIN and NODATA as a
    /// ``NegativeAnswer`` (with the zone's SOA record and the CNAME chain; source
    /// ``Resolution/Source/negativeCache`` from the cache) and the seconds the answer may still be used
    /// on the cache's monotonic clock (``ResolutionOutcome/ttlLeft``, ``ResolutionOutcome/age``).
    ///
    /// - Throws: as ``resolve(_:family:)``, except `.nxdomain` and `.nodata`.
    nonisolated(nonsending) public func resolveDetailed(_ name: HostName, family: AddressFamily) async throws(ResolutionError)
        -> ResolutionOutcome
    {
        try await resolveDetailed(name, family: family, countingLookup: true)
    }

    /// ``resolveDetailed(_:family:)``, for a caller whose ``cachedAnswer(_:family:)`` has just missed:
    /// with `countingLookup` false the cache statistics do not count that one lookup twice.
    nonisolated(nonsending) package func resolveDetailed(_ name: HostName, family: AddressFamily, countingLookup: Bool)
        async throws(ResolutionError) -> ResolutionOutcome
    {
        if let literal = ResolutionOutcome.literal(for: name, family: family, routing: upstream) { return literal }
        let now = cache.clock.nanoseconds()
        let found = cache.find(name, family: family, now: now, counting: countingLookup, claimingRefresh: true)
        if case .fresh(let entry) = found {
            if entry.refreshClaimed { refresh(name, family: family, generation: entry.generation, now: now) }
            return cache.outcome(of: entry, now: now)
        }
        return try await resolveMissing(name, family: family, found: found, now: now)
    }

    /// Resolves `name` as ``resolveDetailed(_:family:)`` does, without a task to wait in: `completion` gets
    /// what it would return or throw. A fresh entry or a literal completes at once, on the caller's thread;
    /// a miss joins the flight running for the name and family or leads one, whose ``TrustedResolver``
    /// upstream asks its first upstream without a task (``TrustedResolver/resolveDetailed(_:family:completion:)``),
    /// so `completion` runs on that upstream's c-ares thread. An expired entry (serve-stale, the
    /// stale-answer timer) takes the task-based path. `completion` must not block. `countingLookup: false`
    /// leaves the lookup out of the cache's statistics (the stub has counted it already).
    package func resolveDetailed(_ name: HostName, family: AddressFamily, countingLookup: Bool = true,
                                 completion: @escaping @Sendable (Result<ResolutionOutcome, ResolutionError>) -> Void) {
        if let literal = ResolutionOutcome.literal(for: name, family: family, routing: upstream) { return completion(.success(literal)) }
        let now = cache.clock.nanoseconds()
        let found = cache.find(name, family: family, now: now, counting: countingLookup, claimingRefresh: true)
        switch found {
        case .fresh(let entry):
            if entry.refreshClaimed { refresh(name, family: family, generation: entry.generation, now: now) }
            return completion(.success(cache.outcome(of: entry, now: now)))
        case .expired:
            return resolveExpired(name, family: family, found: found, now: now, completion: completion)
        case .removed, .absent:
            break
        }
        let key = ResolutionCache.Key(name: name, family: family)
        let (flight, leads) = joinOrLead(key)
        if leads { return fly(flight, for: key, completion: completion) }
        flight.whenFinished { [self] result in
            if case .success(let outcome) = result, outcome.source == .stale { cache.countStaleServed() }
            completion(result)
        }
    }

    /// The rest of ``resolveDetailed(_:family:countingLookup:completion:)`` for an expired entry `found` at
    /// monotonic `now` (serve-stale and its timer), in a task: for a batch that looked the name up itself.
    func resolveExpired(_ name: HostName, family: AddressFamily, found: CacheShard.Lookup, now: UInt64,
                        completion: @escaping @Sendable (Result<ResolutionOutcome, ResolutionError>) -> Void) {
        resolveInTask(completion: completion) { [self] () async throws(ResolutionError) in
            try await resolveMissing(name, family: family, found: found, now: now)
        }
    }

    /// Runs `resolve` in a task of its own and hands its result to `completion`.
    private func resolveInTask(completion: @escaping @Sendable (Result<ResolutionOutcome, ResolutionError>) -> Void,
                               _ resolve: @escaping @Sendable () async throws(ResolutionError) -> ResolutionOutcome) {
        Task {
            let result: Result<ResolutionOutcome, ResolutionError>
            do throws(ResolutionError) {
                result = .success(try await resolve())
            } catch {
                result = .failure(error)
            }
            completion(result)
        }
    }

    /// What ``resolveDetailed(_:family:)`` returns without waiting: the answer to a literal, a fresh
    /// positive entry read in place (``CachedAddresses``: nothing allocated), or a fresh negative entry
    /// (each starting its refresh-ahead as a lookup does); `nil` when it would have to resolve. Counted
    /// once in the cache's statistics. A caller that answers many names (the DNS stub) answers hits at
    /// once with it, and starts a task only for the rest (then with `countingLookup: false`).
    package func cachedAnswer(_ name: HostName, family: AddressFamily) -> CachedAnswer? {
        if name.mayBeAnsweredLocally, let literal = ResolutionOutcome.literal(for: name, family: family, routing: upstream) {
            return .outcome(literal)
        }
        let now = cache.clock.nanoseconds()
        if case .addresses(let addresses, let generation) = cache.freshHit(name, family: family, now: now, claimingRefresh: true) {
            if let generation { refresh(name, family: family, generation: generation, now: now) }
            return .addresses(addresses)
        }
        // A second look, not counted (as in ``resolve(_:family:)``): a negative entry's whole answer, or
        // an expired one whose retry is due.
        switch cache.find(name, family: family, now: now, counting: false, claimingRefresh: true) {
        case .fresh(let entry):
            if entry.refreshClaimed { refresh(name, family: family, generation: entry.generation, now: now) }
            return .outcome(cache.outcome(of: entry, now: now))
        case .expired(let entry):
            // A name served stale whose retry was due: this lookup claimed it, so it starts it.
            if entry.refreshClaimed { refresh(name, family: family, generation: entry.generation, now: now) }
            return nil
        case .removed, .absent:
            return nil
        }
    }

    /// Resolves each of `names` into the cache ahead of its first use (pre-resolve), at most
    /// `concurrency` at once, through the same single-flight as other callers.
    ///
    /// - Parameters:
    ///   - names: Normalised names; repeats are resolved once.
    ///   - family: The family each is resolved for: later lookups must ask for the same to hit. `any` by
    ///     default.
    ///   - concurrency: The most resolutions running at once, at least 1. Default 32.
    /// - Returns: Each name's outcome, in the order given.
    public func preresolve(_ names: [HostName], family: AddressFamily = .any, concurrency: Int = 32) async
        -> [Result<ResolutionOutcome, ResolutionError>]
    {
        await withTaskGroup(of: (Int, Result<ResolutionOutcome, ResolutionError>).self) { group in
            var results = [Result<ResolutionOutcome, ResolutionError>](repeating: .failure(.cancelled), count: names.count)
            var next = 0
            func startNext() {
                let index = next
                next += 1
                group.addTask {
                    // One return after the do/catch: returning the tuple from both of its branches is
                    // miscompiled at -O (docs/ARCHITECTURE.md, "Known traps").
                    let result: Result<ResolutionOutcome, ResolutionError>
                    do throws(ResolutionError) {
                        result = .success(try await self.resolveDetailed(names[index], family: family))
                    } catch {
                        result = .failure(error)
                    }
                    return (index, result)
                }
            }
            while next < min(names.count, max(1, concurrency)) { startNext() }
            while let (index, result) = await group.next() {
                results[index] = result
                if next < names.count { startNext() }
            }
            return results
        }
    }

    /// Resolves many names at once, each as ``resolveDetailed(_:family:)`` would, without a task or a
    /// continuation per name: submit names to the returned ``BatchResolution`` and `sink` gets each outcome
    /// with its tag as it comes (hits at once, misses from the upstream's c-ares thread). For callers with
    /// thousands of names to resolve, such as `hostpin lookup --batch`.
    ///
    /// - Parameters:
    ///   - family: A (`v4`), AAAA (`v6`) or both (`any`), for every name.
    ///   - concurrency: The most names being resolved at once (at least 1); more wait their turn.
    ///   - sink: Gets each outcome (``BatchResolution/Sink``): an answer, NXDOMAIN or NODATA as a
    ///     ``NegativeAnswer``, or the error ``resolveDetailed(_:family:)`` throws (`.upstreamsFailed`,
    ///     `.timeout` when the budget runs out, …). It must not block.
    /// - Returns: The batch to submit names to.
    public func resolveMany(family: AddressFamily, concurrency: Int, sink: @escaping BatchResolution.Sink)
        -> BatchResolution
    {
        BatchResolution(resolver: self, family: family, concurrency: concurrency, sink: sink)
    }

    /// Asks the upstream for `name` again whatever the cache holds, and keeps the answer: a refresh
    /// after a network change (issue 30), when what is cached was learnt on the old path. Joins a
    /// resolution of the name already running instead of starting a second one. A failure leaves a
    /// cached answer as it was (it stands in, as for any refresh).
    ///
    /// - Returns: Whether an upstream answered (addresses, NXDOMAIN or NODATA), not the cache or a stale
    ///   stand-in: a caller retrying while the network settles asks again only when it did not.
    public func refreshFromUpstream(_ name: HostName, family: AddressFamily) async -> Bool {
        let key = ResolutionCache.Key(name: name, family: family)
        let (flight, leads) = joinOrLead(key)
        let result: Result<ResolutionOutcome, ResolutionError>
        if leads {
            cache.countRefresh()
            // A generation no entry has: the flight skips the check for an answer stored meanwhile, and a
            // failure marks no entry's refresh as failed.
            result = await fly(flight, for: key, refreshing: .max)
        } else {
            do throws(ResolutionError) {
                result = .success(try await flight.wait())
            } catch {
                result = .failure(error)
            }
        }
        guard case .success(let outcome) = result else { return false }
        return outcome.source == .upstream
    }

    /// The number of upstream resolutions running, refreshes included.
    var flightsInProgress: Int { flights.withLock { $0.count } }

    /// The path of a lookup that found no fresh entry (`found`, at monotonic `now`): the stale answer at
    /// once for a name already served stale (starting a background refresh when one is due), else the
    /// shared upstream resolution — waited for at most the stale-answer timeout when an expired entry may
    /// stand in.
    private func resolveMissing(_ name: HostName, family: AddressFamily, found: CacheShard.Lookup, now: UInt64)
        async throws(ResolutionError) -> ResolutionOutcome
    {
        let key = ResolutionCache.Key(name: name, family: family)
        var standIn: Resolution?
        if case .expired(let entry) = found, case .addresses(let resolution) = entry.answer {
            if entry.servingStale {
                if entry.refreshClaimed { refresh(name, family: family, generation: entry.generation, now: now) }
                cache.countStaleServed()
                return cache.staleOutcome(of: resolution)
            }
            if upstream.servesStale(name) { standIn = resolution }
        }
        let (flight, leads) = joinOrLead(key)
        if leads { launch(flight, for: key, refreshing: nil) }
        if let standIn { return try await staleUnlessAnswered(flight, standIn: standIn).get() }
        let outcome = try await flight.wait()
        if outcome.source == .stale { cache.countStaleServed() }
        return outcome
    }

    /// Waits for `flight` at most ``ResolutionCache/Policy/staleAnswerTimeout`` (RFC 8767 §5, the client
    /// response timer): its outcome when it ends first; else `standIn`, the expired answer, served stale
    /// while the flight goes on for the cache.
    private func staleUnlessAnswered(_ flight: Flight<ResolutionOutcome>, standIn: Resolution) async -> Result<ResolutionOutcome, ResolutionError> {
        // Every resolution ends within its budget, far below a day: a longer sleep would only risk
        // overflowing the clock's deadline.
        let timeout = min(cache.policy.staleAnswerTimeout, .seconds(86_400))
        if timeout > .zero {
            // Two children race: the flight's waiter and a timer; the loser is cancelled (a cancelled waiter
            // leaves the flight to its other waiters).
            let first = await withTaskGroup(of: Result<ResolutionOutcome, ResolutionError>?.self) { group in
                group.addTask {
                    // One return after the do/catch, as in `preresolve` (docs/ARCHITECTURE.md, "Known traps").
                    let outcome: Result<ResolutionOutcome, ResolutionError>?
                    do throws(ResolutionError) {
                        outcome = .success(try await flight.wait())
                    } catch {
                        outcome = .failure(error)
                    }
                    return outcome
                }
                group.addTask {
                    try? await Task.sleep(for: timeout)
                    return nil
                }
                defer { group.cancelAll() }
                return await group.next() ?? nil
            }
            if let first {
                if case .success(let outcome) = first, outcome.source == .stale { cache.countStaleServed() }
                return first
            }
            if Task.isCancelled { return .failure(.cancelled) }
        }
        cache.countStaleServed()
        return .success(cache.staleOutcome(of: standIn))
    }

    /// Starts a background refresh of the entry for `name` and `family` of `generation`, whose refresh
    /// the caller has claimed, unless a resolution of the name and family is already running (whose
    /// answer will replace the entry anyway).
    func refresh(_ name: HostName, family: AddressFamily, generation: UInt32, now: UInt64) {
        let key = ResolutionCache.Key(name: name, family: family)
        let flight = flights.withLock { flights -> Flight<ResolutionOutcome>? in
            guard flights[key] == nil else { return nil }
            let flight = Flight<ResolutionOutcome>()
            flights[key] = flight
            return flight
        }
        guard let flight else {
            cache.refreshFailed(name, family: family, generation: generation, now: now)
            return
        }
        cache.countRefresh()
        launch(flight, for: key, refreshing: generation)
    }

    /// Runs `flight`: asks `upstream`, keeps the answer in the cache, and hands the outcome to every
    /// waiter. `entry` is the generation of the cache entry a background refresh was started for, `nil` for
    /// a miss.
    private func launch(_ flight: Flight<ResolutionOutcome>, for key: ResolutionCache.Key, refreshing entry: UInt32?) {
        // Unstructured on purpose: the resolution belongs to every waiter, so no single caller's
        // cancellation may end it.
        Task { _ = await fly(flight, for: key, refreshing: entry) }
    }

    /// The body of a flight, in whichever task runs it: asks `upstream` (unless another flight stored an
    /// answer meanwhile), keeps the answer, ends the flight with the outcome and returns it. `entry` is
    /// the generation of the entry a background refresh was started for, `nil` for a miss.
    func fly(_ flight: Flight<ResolutionOutcome>, for key: ResolutionCache.Key,
                     refreshing entry: UInt32?) async -> Result<ResolutionOutcome, ResolutionError>
    {
        let result: Result<ResolutionOutcome, ResolutionError>
        if entry == nil, let stored = storedMeanwhile(key) {
            result = .success(stored)
        } else if entry == nil, let shared {
            // A miss with a second level: the race runs on the store's, the timer's and the upstream's
            // threads; this task waits for its winner.
            result = await withCheckedContinuation { continuation in
                race(shared, for: key) { continuation.resume(returning: $0) }
            }
        } else {
            let received: Result<ResolutionOutcome, ResolutionError>
            do throws(ResolutionError) {
                received = .success(try await upstream.resolveDetailed(key.name, family: key.family))
            } catch {
                received = .failure(error)
            }
            result = settle(received, for: key, refreshing: entry)
        }
        land(flight, for: key, with: result)
        return result
    }

    /// The body of a miss's flight without a task (``resolveDetailed(_:family:completion:)``): as
    /// ``fly(_:for:refreshing:)``, with `completion` getting the outcome on the thread that ends it. A
    /// ``CompletionResolver`` upstream is asked through its callback path; any other in a task.
    func fly(_ flight: Flight<ResolutionOutcome>, for key: ResolutionCache.Key,
                     completion: @escaping @Sendable (Result<ResolutionOutcome, ResolutionError>) -> Void) {
        if let stored = storedMeanwhile(key) {
            let result = Result<ResolutionOutcome, ResolutionError>.success(stored)
            land(flight, for: key, with: result)
            return completion(result)
        }
        if let shared {
            return race(shared, for: key) { [self] result in
                land(flight, for: key, with: result)
                if case .success(let outcome) = result, outcome.source == .stale { cache.countStaleServed() }
                completion(result)
            }
        }
        let finish: @Sendable (Result<ResolutionOutcome, ResolutionError>) -> Void = { [self] received in
            let result = settle(received, for: key, refreshing: nil)
            land(flight, for: key, with: result)
            if case .success(let outcome) = result, outcome.source == .stale { cache.countStaleServed() }
            completion(result)
        }
        askUpstream(key, completion: finish)
    }

    /// A miss's race between `shared` and `upstream` (``SharedCacheRace``): `finish` gets the first valid
    /// answer, kept in memory (and, from an upstream, in `shared`), or the upstream's settled failure.
    private func race(_ shared: SharedCache, for key: ResolutionCache.Key,
                      finish: @escaping @Sendable (Result<ResolutionOutcome, ResolutionError>) -> Void) {
        let race = SharedCacheRace(
            askUpstream: { [self] done in askUpstream(key, completion: done) },
            shared: { [self] answer in .success(keepShared(answer, for: key)) },
            upstream: { [self] received in settle(received, for: key, refreshing: nil) },
            finish: finish)
        race.run(shared, name: key.name, family: key.family)
    }

    /// Asks `upstream` for `key`: a ``CompletionResolver`` through its callback path, any other in a task.
    private func askUpstream(_ key: ResolutionCache.Key,
                             completion finish: @escaping @Sendable (Result<ResolutionOutcome, ResolutionError>) -> Void) {
        if let direct = upstream as? any CompletionResolver {
            direct.resolveDetailed(key.name, family: key.family, completion: finish)
        } else {
            resolveInTask(completion: finish) { [upstream] () async throws(ResolutionError) in
                try await upstream.resolveDetailed(key.name, family: key.family)
            }
        }
    }

    /// The flight running for `key`, or a new one entered in the table, which the caller then leads.
    func joinOrLead(_ key: ResolutionCache.Key) -> (flight: Flight<ResolutionOutcome>, leads: Bool) {
        flights.withLock { flights in
            if let running = flights[key] { return (running, false) }
            let flight = Flight<ResolutionOutcome>()
            flights[key] = flight
            return (flight, true)
        }
    }

    /// A fresh answer for `key` that another flight stored between the caller's cache miss and its taking
    /// the lead.
    func storedMeanwhile(_ key: ResolutionCache.Key) -> ResolutionOutcome? {
        let now = cache.clock.nanoseconds()
        guard case .fresh(let hit) = cache.find(key.name, family: key.family, now: now, counting: false) else {
            return nil
        }
        return cache.outcome(of: hit, now: now)
    }

    /// What a flight for `key` ends with when `upstream` gave `received`: the answer kept in the cache, or
    /// the stand-in for a failure (``standIn(for:key:refreshing:)``).
    func settle(_ received: Result<ResolutionOutcome, ResolutionError>, for key: ResolutionCache.Key,
                        refreshing entry: UInt32?) -> Result<ResolutionOutcome, ResolutionError> {
        switch received {
        case .success(let outcome): .success(keep(outcome, for: key))
        case .failure(let error): standIn(for: error, key: key, refreshing: entry)
        }
    }

    /// Ends `flight`: out of the table first, so a caller that finds no flight finds the answer cached.
    func land(_ flight: Flight<ResolutionOutcome>, for key: ResolutionCache.Key,
                      with result: Result<ResolutionOutcome, ResolutionError>) {
        flights.withLock { _ = $0.removeValue(forKey: key) }
        flight.finish(result)
    }

    /// Caches `outcome`, an answer just received for `key`, and returns it with the lifetime the cache
    /// gives it; an answer from the untrusted fallback (which the cache never keeps, and which never
    /// removes what it holds) gives way to a trusted stale one.
    private func keep(_ outcome: ResolutionOutcome, for key: ResolutionCache.Key) -> ResolutionOutcome {
        if outcome.source == .untrusted, let stale = staleAnswer(for: key) { return stale }
        switch outcome.answer {
        case .addresses(let resolution): cache.store(resolution, family: key.family)
        case .negative(let negative): cache.store(negative)
        }
        let lifetime = cache.lifetime(of: outcome)
        shared?.keep(outcome, family: key.family, lifetime: lifetime)
        return ResolutionOutcome(answer: outcome.answer, ttlLeft: lifetime, age: 0)
    }

    /// Keeps `answer`, read from the shared cache for `key` (its TTLs already counted down), in memory,
    /// and returns it with the lifetime the memory gives it.
    private func keepShared(_ answer: ResolutionOutcome.Answer, for key: ResolutionCache.Key) -> ResolutionOutcome {
        switch answer {
        case .addresses(let resolution): cache.store(resolution, family: key.family)
        case .negative(let negative): cache.store(negative)
        }
        let outcome = ResolutionOutcome(answer: answer, ttlLeft: 0, age: 0)
        return ResolutionOutcome(answer: answer, ttlLeft: cache.lifetime(of: outcome), age: 0)
    }

    /// What the waiters get when the upstream failed with `error`: for a failure to get any answer (every
    /// upstream failed, the budget ran out, no channel), a fresh entry stored meanwhile or the expired
    /// entry served stale; otherwise, or without such an entry, the error. A failed refresh of `entry`
    /// leaves it as it was; the next may start after the retry interval.
    private func standIn(for error: ResolutionError, key: ResolutionCache.Key, refreshing entry: UInt32?)
        -> Result<ResolutionOutcome, ResolutionError>
    {
        let now = cache.clock.nanoseconds()
        if let entry { cache.refreshFailed(key.name, family: key.family, generation: entry, now: now) }
        switch error {
        // A bogus answer (validate mode) is no answer: the entry validated before may stand in for it.
        case .upstreamsFailed, .timeout, .setupFailed, .dnssecBogus:
            if case .fresh(let hit) = cache.find(key.name, family: key.family, now: now, counting: false) {
                return .success(cache.outcome(of: hit, now: now))
            }
            return staleAnswer(for: key).map { .success($0) } ?? .failure(error)
        case .nxdomain, .nodata, .badName, .noUpstreams, .cancelled:
            return .failure(error)
        }
    }

    /// The expired entry for `key` served stale, now that an upstream failed: from now on the name is
    /// answered stale at once and refreshed after the retry interval. `nil` without such an entry.
    /// A name whose route serves no stale answers (``Route/serveStale``) gets none.
    private func staleAnswer(for key: ResolutionCache.Key) -> ResolutionOutcome? {
        guard upstream.servesStale(key.name) else { return nil }
        return cache.serveStale(key.name, family: key.family, now: cache.clock.nanoseconds())
    }
}
