import HostPin
import HostPinNet

/// The service's reaction to network changes (issue 30): what it held was learnt on the old path.
extension Service {
    /// The most cache entries refreshed after a change (the most recently used), besides the pre-resolve list.
    static let refreshedEntries = 1_000
    /// How long the refresh retries names no upstream answered while the network settles.
    static let refreshWindow = Duration.seconds(30)
    /// How many names are refreshed at once.
    static let refreshConcurrency = 32

    /// Opens the ``NetworkMonitor`` and reacts to each change it reports; a socket that cannot be opened
    /// (a sandbox without netlink) is one warning and no watch, never a failure to start.
    func startNetworkWatch() {
        let monitor: NetworkMonitor
        do throws(SocketError) {
            monitor = try NetworkMonitor()
        } catch {
            log.log(.warning, "network changes are not watched: the netlink socket could not be opened (\(error))")
            return
        }
        networkMonitor = monitor
        networkWatch = Task { [weak self] in
            for await change in monitor.changes {
                guard let self else { return }
                await self.networkChanged(change)
            }
        }
    }

    /// Stops the watch and a refresh under way.
    func stopNetworkWatch() {
        networkMonitor?.stop()
        networkWatch?.cancel()
        networkRefresh?.cancel()
    }

    /// One change: closes the proxy's kept origin connections and the encrypted upstreams' connections,
    /// empties the proxy's address ranking (and lets its TLS probe ask each CONNECT target again),
    /// ends every hold-down and probes each upstream, drops negative and stale answers, and refreshes the
    /// names in use in the background for up to ``refreshWindow``. The trusted upstreams stay the only
    /// ones asked: the new network's resolver never is. One log line says what changed and what was done.
    func networkChanged(_ change: NetworkChange) {
        guard !stopped else { return }
        networkMetrics.countChange()
        let closed = proxy?.proxy.closeKeptOrigins() ?? 0
        // Connection times measured on the old path rank nothing on the new one.
        proxy?.proxy.configuration.ranking?.removeAll()
        proxy?.proxy.rankingProbe?.forgetProbed()
        let keys = namesToRefresh()
        upstream.current.networkChanged(probing: keys.first?.name)
        let dropped = cache.cache.removeNegativeAndStale()
        log.log(.info, "network changed (\(change)): closed \(closed) kept origin connection\(closed == 1 ? "" : "s") "
                + "and the encrypted upstreams' connections, ended hold-downs, dropped \(dropped) negative or stale "
                + "answer\(dropped == 1 ? "" : "s"), refreshing \(keys.count) name\(keys.count == 1 ? "" : "s")")
        networkRefresh?.cancel()
        let (cache, metrics, log) = (cache, networkMetrics, log)
        let (proxy, preresolve) = (proxy?.proxy, configuration.cacheOptions.preresolve)
        networkRefresh = Task {
            await Self.refresh(keys, through: cache, metrics: metrics, log: log)
            // Then the pre-resolve list's names are probed again on the new path (issue 30).
            await proxy?.probe(preresolve)
        }
    }

    /// The pre-resolve list (in the families it was resolved for) and the most recently used cache
    /// entries, each (name, family) once.
    func namesToRefresh() -> [(name: HostName, family: AddressFamily)] {
        let settings = configuration
        var families: [AddressFamily] = [settings.dns == nil ? settings.family : .v4]
        if settings.dns != nil { families.append(.v6) }
        var keys: [(name: HostName, family: AddressFamily)] = []
        var seen = Set<String>()
        for name in settings.cacheOptions.preresolve {
            for family in families where seen.insert("\(family) \(name)").inserted {
                keys.append((name, family))
            }
        }
        for key in cache.cache.recentKeys(limit: Self.refreshedEntries)
        where seen.insert("\(key.family) \(key.name)").inserted {
            keys.append(key)
        }
        return keys
    }

    /// Asks the upstreams for each of `keys` again, ``refreshConcurrency`` at once; those no upstream
    /// answered are asked again after 0.5 s, 1 s, 2 s, … until ``refreshWindow`` has passed since the
    /// start. Ends early when cancelled (a newer change).
    static func refresh(_ keys: [(name: HostName, family: AddressFamily)], through cache: CachingResolver,
                        metrics: NetworkMetrics, log: ServiceLog) async {
        let end = ContinuousClock.now + refreshWindow
        var pending = keys
        var pause = Duration.milliseconds(500)
        while !pending.isEmpty, !Task.isCancelled {
            let failed = await refreshOnce(pending, through: cache)
            for _ in 0..<(pending.count - failed.count) { metrics.countRefresh(.answered) }
            for _ in failed { metrics.countRefresh(.failed) }
            pending = failed
            guard !pending.isEmpty, ContinuousClock.now + pause < end else { break }
            guard (try? await Task.sleep(for: pause)) != nil else { return }
            pause = min(pause * 2, .seconds(8))
        }
        if !pending.isEmpty, !Task.isCancelled {
            log.log(.debug, "network change: \(pending.count) name\(pending.count == 1 ? "" : "s") still unanswered "
                    + "after \(refreshWindow.components.seconds) s (\(pending.prefix(3).map(\.name.description).joined(separator: ", ")))")
        }
    }

    /// One round: every key refreshed once; returns those no upstream answered.
    private static func refreshOnce(_ keys: [(name: HostName, family: AddressFamily)], through cache: CachingResolver) async
        -> [(name: HostName, family: AddressFamily)]
    {
        await withTaskGroup(of: (Int, Bool).self) { group in
            var next = 0
            var failed: [Int] = []
            func startNext() {
                let index = next
                next += 1
                let key = keys[index]
                group.addTask { (index, await cache.refreshFromUpstream(key.name, family: key.family)) }
            }
            while next < min(keys.count, refreshConcurrency) { startNext() }
            while let (index, answered) = await group.next() {
                if !answered { failed.append(index) }
                if next < keys.count, !Task.isCancelled { startNext() }
            }
            return failed.sorted().map { keys[$0] }
        }
    }
}
