import HostPin
import HostPinDNS
import HostPinNet
import HostPinProxy

extension Service {
    /// Puts `new` in force, or leaves everything as it was and says why in one line (the same
    /// all-or-nothing rule as SIGHUP in `hostpin serve`, which parses its command line and configuration
    /// file again into `new`).
    ///
    /// Everything that can fail comes first, off to the side: a new trusted resolver when the upstream
    /// settings changed (its bootstrap lookups), the DNSSEC settings included, and the listeners on new
    /// addresses. Then the swap, with nothing left to fail: the rules in place, the resolver behind the
    /// cache (the answers of upstreams no longer listed dropped; every upstream's answer when the DNSSEC
    /// settings changed), the cache's limits, the listeners whose address went away stopped (a
    /// replaced proxy with its grace period). Requests in flight finish on what they started with.
    ///
    /// - Returns: What changed, and what changed but waits for a restart (both also said in the log).
    /// - Throws: ``ServiceError/reloadRefused(_:)`` with the reason; nothing changed.
    @discardableResult
    public func reload(to new: ServiceConfiguration) async throws(ServiceError) -> ServiceReload {
        guard !stopped else { throw refuse("the service is stopping") }
        guard !reloading else { throw refuse("another reload is under way") }
        reloading = true
        defer {
            reloading = false
            for waiter in reloadWaiters { waiter.resume() }
            reloadWaiters = []
        }
        let settings = configuration
        var summary = ["\(new.rules.count) rule\(new.rules.count == 1 ? "" : "s")"]

        // Off to the side: what can fail.
        var trusted: TrustedResolver?
        if new.resolverConfiguration != settings.resolverConfiguration {
            do throws(ResolutionError) {
                trusted = try await TrustedOptions.makeResolver(new.resolverConfiguration, log: log)
            } catch {
                throw refuse("the new upstreams cannot be set up: \(error)")
            }
        }
        var unmatched = dnsServers
        var servers: [(address: SocketAddress, server: DNSServer)] = []
        var added: [SocketAddress] = []
        if let dns = new.dns, let responder {
            for address in dns.listenAddresses {
                if let index = unmatched.firstIndex(where: { $0.address == address }) {
                    servers.append(unmatched.remove(at: index))
                } else {
                    added.append(address)
                }
            }
            switch await startDNS(added, dns, responder) {
            case .success(let started): servers += started
            case .failure(let error): throw refuse("\(error)")
            }
        }
        var startedProxy: RunningProxy?
        let proxyMoves = new.proxyOptions?.configuration.listenAddress != settings.proxyOptions?.configuration.listenAddress
        if proxyMoves, let options = new.proxyOptions {
            switch startProxy(options, new) {
            case .success(let started): startedProxy = started
            case .failure(let error):
                for (_, server) in servers.suffix(added.count) { await server.stop() }
                throw refuse("\(error)")
            }
        }

        var startedControl: ControlServer?
        let controlMoves = new.controlSocket != settings.controlSocket
        if controlMoves, let path = new.controlSocket {
            switch startControl(path) {
            case .success(let server): startedControl = server
            case .failure(let error):
                await startedProxy?.retire()
                for (_, server) in servers.suffix(added.count) { await server.stop() }
                throw refuse("\(error)")
            }
        }

        // The metrics endpoint moves only when it was on at start: the counters are made then or never.
        var startedEndpoint: (endpoint: MetricsEndpoint, address: SocketAddress)?
        let endpointMoves = endpointAtStart && new.metrics.listenAddress != settings.metrics.listenAddress
        if endpointMoves {
            switch startEndpoint(new.metrics) {
            case .success(let started): startedEndpoint = started
            case .failure(let error):
                if controlMoves { await startedControl?.stop() }
                await startedProxy?.retire()
                for (_, server) in servers.suffix(added.count) { await server.stop() }
                throw refuse("--metrics-listen: \(error)")
            }
        }

        // Stopped meanwhile (the actor ran stop(grace:) at one of the suspensions above): nothing is swapped.
        if stopped {
            await startedEndpoint?.endpoint.stop()
            if controlMoves { await startedControl?.stop() }
            await startedProxy?.retire()
            for (_, server) in servers.suffix(added.count) { await server.stop() }
            throw refuse("the service is stopping")
        }

        // The swap: nothing below fails.
        var restart: [String] = []
        new.log.apply(to: log)
        if new.log.accessLog != settings.log.accessLog { restart.append("--access-log") }
        if new.sharedCache != settings.sharedCache { restart.append("--shared-cache") }
        if !endpointAtStart, new.metrics.listenAddress != nil {
            restart.append("--metrics-listen (the metrics were off at start, so nothing was counted)")
        }
        if let watch = new.watch, let old = settings.watch, watch.server != old.server || watch.configuration != old.configuration {
            restart.append("the watch of the local resolver")
        } else if (new.watch == nil) != (settings.watch == nil) {
            restart.append("--watch-local")
        }
        responder?.liveRules.replace(with: new.rules)
        if !proxyMoves, let proxy, let options = new.proxyOptions, let old = settings.proxyOptions {
            proxy.proxy.liveRules.replace(with: new.rules)
            if options.fixed != old.fixed { restart.append("the proxy's settings other than its address and rules") }
        }
        if let trusted {
            // Split DNS: a route kept as it was keeps its answers; what a removed or changed route answered,
            // and what the default list answered for a domain a new route takes, goes by domain (negative
            // answers too), whichever upstream answered it.
            let oldRoutes = settings.resolverConfiguration.routes.routes
            let newRoutes = new.resolverConfiguration.routes.routes
            let unchangedRoutes = newRoutes.filter { oldRoutes.contains($0) }
            let movedDomains = (oldRoutes + newRoutes).filter { !unchangedRoutes.contains($0) }.flatMap(\.domains)
            let kept = Set((new.resolverConfiguration.upstreams + unchangedRoutes.flatMap(\.upstreams)).map(\.description))
            upstream.replace(with: trusted)
            // Values written under the old DNSSEC mode or upstreams are no longer read, nor written.
            cache.shared?.update(policy: SharedCacheOptions.policy(for: new.resolverConfiguration))
            // Answers validated (or not) under other DNSSEC settings would keep their old verdict for their
            // whole TTL: a switch to validate must not go on serving what it would refuse. All of them go.
            let dnssec = new.resolverConfiguration.dnssec
            let dnssecChanged = dnssec != settings.resolverConfiguration.dnssec
            let dropped = cache.cache.removeAll { dnssecChanged || !kept.contains($0.description) }
                + cache.cache.removeAll(underAnyOf: movedDomains)
            if dnssecChanged || Set(settings.resolverConfiguration.upstreams.map(\.description))
                != Set(new.resolverConfiguration.upstreams.map(\.description)) || !movedDomains.isEmpty {
                responder?.removeForwardedReplies()
            }
            summary.append("upstreams \(new.resolverConfiguration.upstreams.map(\.description).joined(separator: ", "))"
                           + (dropped > 0 && !dnssecChanged ? " (\(dropped) answers of upstreams no longer listed dropped)" : ""))
            if oldRoutes != newRoutes {
                summary.append(newRoutes.isEmpty ? "no routes" : "routes \(new.resolverConfiguration.routes)")
            }
            if dnssecChanged {
                summary.append("DNSSEC \(dnssec.mode.rawValue)"
                               + (dropped > 0 ? " (\(dropped) cached answers dropped: they were judged under the old DNSSEC settings)" : ""))
            }
        }
        let policy = new.cacheOptions.policy(refreshAhead: true)
        let limits = new.cacheOptions.limits.limits
        if limits != cache.cache.limits || policy != cache.cache.policy {
            cache.cache.update(limits: limits, policy: policy)
            summary.append("cache limits")
        }
        for (address, server) in unmatched {
            await server.stop()
            summary.append("no longer listening on \(address) (DNS)")
        }
        if let dns = new.dns, let old = settings.dns {
            if dns.blockedAnswer != old.blockedAnswer { restart.append("--blocked-answer") }
            if dns.allowRemote != old.allowRemote && !servers.isEmpty { restart.append("--allow-remote (for the DNS addresses kept)") }
        }
        if new.family != settings.family && !proxyMoves && proxy != nil { restart.append("--family") }
        if proxyMoves {
            if let old = proxy {
                summary.append("the proxy moved from \(old.address)")
                Task { await old.retire() }
            }
            proxy = startedProxy
        }
        if new.cacheOptions.cacheFile != settings.cacheOptions.cacheFile {
            await keeper?.finish()
            keeper = new.cacheOptions.cacheFile.map { CacheKeeper(cache: cache.cache, path: $0, period: CacheOptions.savePeriod, log: log) }
            summary.append("cache file \(new.cacheOptions.cacheFile ?? "none") (written from now on, not read)")
        }
        let fresh = new.cacheOptions.preresolve.filter { !settings.cacheOptions.preresolve.contains($0) }
        if !fresh.isEmpty {
            let families: [AddressFamily] = new.dns == nil ? [new.family] : [.v4, .v6]
            let cache = cache
            Task {
                for family in families { _ = await cache.preresolve(fresh, family: family) }
            }
            summary.append("pre-resolving \(fresh.count) new name\(fresh.count == 1 ? "" : "s")")
        }
        if endpointMoves {
            await endpoint?.stop()
            (endpoint, endpointAddress) = (startedEndpoint?.endpoint, startedEndpoint?.address)
            summary.append("metrics endpoint \(startedEndpoint.map { _ in "moved" } ?? "closed")")
        }
        if controlMoves {
            await control?.stop()
            control = startedControl
            summary.append("control socket \(new.controlSocket ?? "closed")")
        }
        dnsServers = servers
        configuration = new
        reloads += 1
        publishStatus()
        log.log(.info, "hostpin: reloaded: " + summary.joined(separator: "; "))
        if !restart.isEmpty {
            log.log(.warning, "hostpin: reload: " + restart.joined(separator: ", ") + " changed; this takes effect at a restart")
        }
        return ServiceReload(changes: summary, waitingForRestart: restart)
    }

    /// Says in one line why a reload was refused, and returns the error; the service goes on as it was.
    package func refuse(_ reason: String) -> ServiceError {
        let error = ServiceError.reloadRefused(reason)
        log.log(.warning, "hostpin: \(error)")
        return error
    }
}

/// What a reload (``Service/reload(to:)``) changed.
public struct ServiceReload: Sendable, Equatable {
    /// What was put in force, one phrase each (`2 rules`, `upstreams 127.0.0.1:53`, `cache limits`, ...).
    public var changes: [String]
    /// What changed but takes effect only at a restart (`--access-log`, the watch, ...).
    public var waitingForRestart: [String]
}
