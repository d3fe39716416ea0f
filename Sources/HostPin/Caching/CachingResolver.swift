import Synchronization

/// A ``HostResolver`` that answers from a ``ResolutionCache`` and asks its upstream resolver only on a miss,
/// once per name and family however many callers miss together (single-flight).
///
/// Fresh hits return without suspending on anything but the cache lock. Negative answers (NXDOMAIN,
/// NODATA) and failures are shared with the callers waiting at that moment but not cached.
public final class CachingResolver: HostResolver {
    /// The resolver asked on a miss, e.g. a ``TrustedResolver``.
    public let upstream: any HostResolver
    /// The cache consulted first.
    public let cache: ResolutionCache
    /// The resolutions running, one per name and family; each is removed when it completes, so the
    /// table holds no more than the distinct names being resolved at once.
    private let flights = Mutex<[ResolutionCache.Key: Flight]>([:])

    /// Puts `cache` in front of `upstream`.
    public init(upstream: any HostResolver, cache: ResolutionCache = ResolutionCache()) {
        self.upstream = upstream
        self.cache = cache
    }

    /// Returns the cached resolution for `name` and `family` while it is fresh (source
    /// ``Resolution/Source/cache``, TTL and `receivedAt` as first received), otherwise resolves through
    /// `upstream` (joining a resolution already running for the same key) and caches a positive answer
    /// for its TTL.
    ///
    /// - Throws: what `upstream` throws, shared by every caller that waited for the same resolution, or
    ///   ``ResolutionError/cancelled`` for a caller whose task was cancelled (the others still get the answer).
    public func resolve(_ name: HostName, family: AddressFamily) async throws(ResolutionError) -> Resolution {
        if let literal = Resolution.literal(for: name, family: family) {
            guard !literal.addresses.isEmpty else { throw .nodata(name, family) }
            return literal
        }
        if let hit = cache.lookup(name, family: family) { return hit }

        let key = ResolutionCache.Key(name: name, family: family)
        let (flight, leads) = flights.withLock { flights -> (Flight, Bool) in
            if let running = flights[key] { return (running, false) }
            let flight = Flight()
            flights[key] = flight
            return (flight, true)
        }
        if leads { launch(flight, for: key) }
        return try await flight.wait()
    }

    /// The number of upstream resolutions running.
    var flightsInProgress: Int { flights.withLock { $0.count } }

    private func launch(_ flight: Flight, for key: ResolutionCache.Key) {
        // Unstructured on purpose: the resolution belongs to every waiter, so no single caller's
        // cancellation may end it.
        Task {
            let result: Result<Resolution, ResolutionError>
            if let hit = cache.lookup(key.name, family: key.family) {
                // Another flight stored this between our cache miss and taking the lead.
                result = .success(hit)
            } else {
                do throws(ResolutionError) {
                    let resolution = try await upstream.resolve(key.name, family: key.family)
                    cache.store(resolution, family: key.family)
                    result = .success(resolution)
                } catch {
                    result = .failure(error)
                }
            }
            flights.withLock { _ = $0.removeValue(forKey: key) }
            flight.finish(result)
        }
    }
}
