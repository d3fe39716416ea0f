import HostPin
import HostPinDNS
import HostPinNet
import HostPinProxy

extension Service {
    /// Reads the command line and the configuration file again (`reparse`, on a thread of its own: it
    /// reads files) and puts the result in force, or leaves everything as it was and says why in one line.
    ///
    /// Everything that can fail comes first, off to the side: the parse (every check of the options, the
    /// configuration file and the rules), a new trusted resolver when the upstream settings changed (its
    /// bootstrap lookups), and the listeners on new addresses. Then the swap, with nothing left to fail:
    /// the rules in place, the resolver behind the cache (the answers of upstreams no longer listed
    /// dropped), the cache's limits, the listeners whose address went away stopped (a replaced proxy with
    /// its grace period). Requests in flight finish on what they started with.
    func reload(_ reparse: @escaping @Sendable () throws(UsageError) -> ServiceSettings) async {
        // The body throws nothing: `try?` only satisfies the signature.
        let parsed = try? await Blocking.run { () -> Result<ServiceSettings, UsageError> in
            do throws(UsageError) {
                return .success(try reparse())
            } catch {
                return .failure(error)
            }
        }
        let new: ServiceSettings
        switch parsed {
        case .success(let settings)?: new = settings
        case .failure(let error)?: return refuse(error.description)
        case nil: return refuse("the command line could not be read again")
        }
        var summary = ["\(new.rules.count) rule\(new.rules.count == 1 ? "" : "s")"]

        // Off to the side: what can fail.
        var trusted: TrustedResolver?
        if new.resolverConfiguration != settings.resolverConfiguration {
            do throws(ResolutionError) {
                trusted = try await TrustedOptions.makeResolver(new.resolverConfiguration)
            } catch {
                return refuse("the new upstreams cannot be set up: \(error)")
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
            switch await Self.startDNS(added, dns, responder) {
            case .success(let started): servers += started
            case .failure(let error): return refuse("\(error)")
            }
        }
        var startedProxy: RunningProxy?
        let proxyMoves = new.proxyOptions?.configuration.listenAddress != settings.proxyOptions?.configuration.listenAddress
        if proxyMoves, let options = new.proxyOptions {
            switch startProxy(options, new) {
            case .success(let started): startedProxy = started
            case .failure(let error):
                for (_, server) in servers.suffix(added.count) { await server.stop() }
                return refuse("\(error)")
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
                return refuse("\(error)")
            }
        }

        // The metrics endpoint moves only when it was on at start: the counters are made then or never.
        var startedEndpoint: MetricsEndpoint?
        let endpointMoves = metrics != nil && new.metrics.listenAddress != settings.metrics.listenAddress
        if endpointMoves {
            switch startEndpoint(new.metrics) {
            case .success(let started): startedEndpoint = started
            case .failure(let error):
                if controlMoves { await startedControl?.stop() }
                await startedProxy?.retire()
                for (_, server) in servers.suffix(added.count) { await server.stop() }
                return refuse("--metrics-listen: \(error)")
            }
        }

        // The swap: nothing below fails.
        var restart: [String] = []
        new.log.apply()
        if new.log.accessLog != settings.log.accessLog { restart.append("--access-log") }
        if metrics == nil, new.metrics.listenAddress != nil {
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
            let kept = Set(new.resolverConfiguration.upstreams.map(\.description))
            upstream.replace(with: trusted)
            let dropped = cache.cache.removeAll { !kept.contains($0.description) }
            if Set(settings.resolverConfiguration.upstreams.map(\.description)) != kept { responder?.removeForwardedReplies() }
            summary.append("upstreams \(new.resolverConfiguration.upstreams.map(\.description).joined(separator: ", "))"
                           + (dropped > 0 ? " (\(dropped) answers of upstreams no longer listed dropped)" : ""))
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
            keeper = new.cacheOptions.cacheFile.map { CacheKeeper(cache: cache.cache, path: $0, period: CacheOptions.savePeriod) }
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
            endpoint = startedEndpoint
            summary.append("metrics endpoint \(startedEndpoint.map { _ in "moved" } ?? "closed")")
        }
        if controlMoves {
            await control?.stop()
            control = startedControl
            summary.append("control socket \(new.controlSocket ?? "closed")")
        }
        dnsServers = servers
        settings = new
        reloads += 1
        publishStatus()
        Console.log(.info, "hostpin: reloaded: " + summary.joined(separator: "; "))
        if !restart.isEmpty {
            Console.log(.warning, "hostpin: reload: " + restart.joined(separator: ", ") + " changed; this takes effect at a restart")
        }
    }

    /// Says in one line why a reload was refused; the service goes on as it was.
    private func refuse(_ reason: String) {
        Console.log(.warning, "hostpin: reload refused, nothing changed: " + reason)
    }
}
