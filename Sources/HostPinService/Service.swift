import Foundation
import HostPin
import HostPinDNS
import HostPinNet
import HostPinProxy

/// The running service — the DNS stub (one ``DNSServer`` per listening address) and/or the forward proxy
/// — on one ``CachingResolver`` that lives as long as the service: a reload (``reload(to:)``; SIGHUP in
/// `hostpin serve`) swaps the upstreams behind it and the rules in front of it, and changes the listeners
/// whose addresses changed, but never empties the cache. With the control socket, the metrics endpoint
/// and the watch of the local resolver when its configuration asks for them.
///
/// Nothing of it is process-wide: two services run side by side in one process on their own addresses
/// with their own settings and logs. What is shared is what the process has once: the event loop
/// (`EventLoop.shared`), libcurl's initialisation, the standard streams. Signals are the caller's: the
/// CLI installs their handlers and calls ``reload(to:)``, ``stop(grace:)`` and ``cutTransfers()``.
///
/// An actor: reloads and the stop run one after the other, and the control socket reads its state between them.
public actor Service {
    // Actor-isolated state; changed only here and by the reload (Service+Reload.swift).
    /// The configuration in force.
    public internal(set) var configuration: ServiceConfiguration
    /// Where this service's diagnostics go.
    public nonisolated let log: ServiceLog
    /// The cache, for the life of the service.
    let cache: CachingResolver
    /// The upstreams behind the cache.
    let upstream: UpstreamSwitch
    /// The stub's answers (`serve`): the rules and the forward cache they hold are replaced in place.
    var responder: DNSResponder?
    /// One server per listening address, in the order of the settings (an address may repeat: port 0).
    var dnsServers: [(address: SocketAddress, server: DNSServer)] = []
    var proxy: RunningProxy?
    var keeper: CacheKeeper?
    /// Reloads applied since the start.
    var reloads = 0
    /// The control socket's server, with `--control-socket`.
    var control: ControlServer?
    /// What the control socket reads.
    let status: ServiceStatus
    /// The stub's, the proxy's and the DNSSEC statuses' counters, made at start when the metrics endpoint
    /// or the control socket is on (else nothing is counted, for the life of the service).
    let counters: (dns: DNSQueryMetrics?, proxy: ProxyMetrics?, dnssec: DNSSECMetrics?)
    /// What the metrics endpoint, the status page and `hostpin ctl status` read: made at start (its
    /// counters only with the endpoint or the control socket on).
    var metrics: ServiceMetrics?
    /// Whether the metrics endpoint was on at start: a reload may move it then, never open it later.
    let endpointAtStart: Bool
    /// Ends a slot of the status page's answers-per-second history every 10 s, while the service runs.
    var sampler: Task<Void, Never>?
    /// The metrics endpoint, with `--metrics-listen`.
    var endpoint: MetricsEndpoint?
    /// Where the metrics endpoint listens, as bound.
    var endpointAddress: SocketAddress?
    /// The watch of the local resolver (`serve --watch-local`), for the life of the service.
    var watcher: LocalResolverWatch?
    /// Where every proxy of the service writes its access log (`--access-log FILE` as at start, or
    /// standard output).
    var accessLog = STDOUT_FILENO
    /// Whether ``stop(grace:)`` has begun.
    var stopped = false
    /// Whether a reload is under way (the actor runs another call at each of its suspensions).
    var reloading = false
    /// What waits for the reload under way to end (``stop(grace:)``).
    var reloadWaiters: [CheckedContinuation<Void, Never>] = []
    /// The watch of the network (issue 30), unless `--no-network-watch` or the socket could not open.
    var networkMonitor: NetworkMonitor?
    /// Reads ``networkMonitor``'s changes and reacts to each.
    var networkWatch: Task<Void, Never>?
    /// The background work after the start or the last change: the refresh of the names in use, and the
    /// proxy's probe of the pre-resolve list's names (a new change cancels it, as ``stop(grace:)`` does).
    var networkRefresh: Task<Void, Never>?
    /// Network changes and the refreshes they caused, counted whenever the network is watched.
    let networkMetrics = NetworkMetrics()

    private init(configuration: ServiceConfiguration, trusted: TrustedResolver, log: ServiceLog) {
        self.configuration = configuration
        self.log = log
        counters = configuration.metrics.counters(dns: configuration.dns != nil, proxy: configuration.proxyOptions != nil,
                                                  controlSocket: configuration.controlSocket != nil)
        upstream = UpstreamSwitch(trusted, dnssecMetrics: counters.dnssec)
        cache = CachingResolver(upstream: upstream, cache: configuration.cacheOptions.makeCache(refreshAhead: true),
                                shared: configuration.sharedCache?.makeSharedCache(for: configuration.resolverConfiguration))
        status = ServiceStatus(cache: cache, upstream: upstream,
                               snapshot: ServiceStatus.Snapshot(responder: nil, dnsListeners: [], proxy: nil, reloads: 0))
        endpointAtStart = configuration.metrics.listenAddress != nil
    }

    /// Starts the service `configuration` describes: sets up the trusted resolver (its bootstrap
    /// lookups), opens the access log, starts the watch, loads the cache file, pre-resolves, and starts
    /// the listeners, saying in `log` where each listens. Runs until ``stop(grace:)``.
    ///
    /// - Parameter log: Where the diagnostics go (standard error by default); its level and format
    ///   become the configuration's.
    /// - Throws: ``ServiceError`` when something cannot start; what had started is stopped again.
    public static func start(_ configuration: ServiceConfiguration, log: ServiceLog = ServiceLog()) async throws(ServiceError)
        -> Service
    {
        configuration.log.apply(to: log)
        let trusted: TrustedResolver
        do throws(ResolutionError) {
            trusted = try await TrustedOptions.makeResolver(configuration.resolverConfiguration, log: log)
        } catch {
            throw .upstreams(error)
        }
        let service = Service(configuration: configuration, trusted: trusted, log: log)
        try await service.start()
        return service
    }

    /// Loads the cache file, pre-resolves, and starts the listeners, saying where each listens.
    ///
    /// - Throws: What could not start (everything started is stopped).
    private func start() async throws(ServiceError) {
        let settings = configuration
        switch settings.log.openAccessLog() {
        case .success(let descriptor): accessLog = descriptor
        case .failure(let error): throw .accessLog(error)
        }
        let findings = settings.watch == nil ? nil : HijackFindings()
        if let watch = settings.watch, let findings {
            do throws(ResolutionError) {
                watcher = try watch.start(trusted: upstream, log: log, findings: findings)
            } catch {
                throw .watch(error)
            }
        }
        keeper = await settings.cacheOptions.start(cache, family: settings.dns == nil ? settings.family : .v4,
                                                   periodicSaving: true, log: log)
        if settings.dns != nil {
            // DNS clients ask for A and AAAA apart, and the cache keeps each family apart: both are
            // pre-resolved (the one line about it counts the first), and the proxy's family when it runs.
            let family = settings.family
            let others: [AddressFamily] = settings.proxyOptions == nil || [.v4, .v6].contains(family) ? [.v6] : [.v6, family]
            for other in others where !settings.cacheOptions.preresolve.isEmpty {
                _ = await cache.preresolve(settings.cacheOptions.preresolve, family: other)
            }
        }
        if let dns = settings.dns {
            let responder = DNSResponder(resolver: cache, rules: settings.rules, forwarder: upstream,
                                         blockedAnswer: dns.blockedAnswer, watch: watcher, metrics: counters.dns)
            self.responder = responder
            switch await startDNS(dns.listenAddresses, dns, responder) {
            case .success(let servers): dnsServers = servers
            case .failure(let error):
                await keeper?.finish()
                await watcher?.stop()
                throw .dnsListen(error)
            }
        }
        if let options = settings.proxyOptions {
            switch startProxy(options, settings) {
            case .success(let started): proxy = started
            case .failure(let error):
                for (_, server) in dnsServers { await server.stop() }
                await keeper?.finish()
                await watcher?.stop()
                throw .proxyListen(error)
            }
        }
        let upstream = upstream
        let metrics = ServiceMetrics(currentResolver: { upstream.current }, cache: cache.cache, dns: counters.dns,
                                     proxy: counters.proxy, watch: watcher, findings: findings, dnssec: counters.dnssec,
                                     sharedCache: cache.shared?.metrics,
                                     network: settings.networkWatch ? networkMetrics : nil)
        self.metrics = metrics
        sampler = Task {
            // Suspends between samples (no thread waits); cancelled by stop(grace:).
            while (try? await Task.sleep(for: metrics.history.slot)) != nil { metrics.sampleAnswers() }
        }
        if settings.metrics.listenAddress != nil {
            switch startEndpoint(settings.metrics) {
            case .success(let started): (endpoint, endpointAddress) = (started?.endpoint, started?.address)
            case .failure(let error):
                await proxy?.proxy.stop()
                for (_, server) in dnsServers { await server.stop() }
                await keeper?.finish()
                await watcher?.stop()
                throw .metricsListen(error)
            }
        }
        publishStatus()
        if let path = settings.controlSocket {
            switch startControl(path) {
            case .success(let server): control = server
            case .failure(let error):
                await endpoint?.stop()
                await proxy?.retire()
                for (_, server) in dnsServers { await server.stop() }
                await keeper?.finish()
                await watcher?.stop()
                throw .control(error)
            }
        }
        if settings.networkWatch { startNetworkWatch() }
        if let proxy = proxy?.proxy {
            // The pre-resolve list's names are ranked before their first CONNECT (issue 30).
            let names = settings.cacheOptions.preresolve
            networkRefresh = Task { await proxy.probe(names) }
        }
    }

    /// Stops every listener (the proxy with its grace period, the configuration's when `grace` is `nil`;
    /// the metrics endpoint says it is stopping until then), writes the cache file once more, and says
    /// what the watch counted. A second call does nothing; a reload under way is refused at its swap.
    public func stop(grace: Duration? = nil) async {
        guard !stopped else { return }
        stopped = true
        // A reload under way sees `stopped` at its swap and undoes what it started; wait for it.
        while reloading {
            await withCheckedContinuation { reloadWaiters.append($0) }
        }
        metrics?.markStopping()
        sampler?.cancel()
        stopNetworkWatch()
        await control?.stop()
        await proxy?.stop(grace: grace, log: log)
        for (_, server) in dnsServers { await server.stop() }
        await endpoint?.stop()
        await keeper?.finish()
        (cache.shared?.store as? RedisStore)?.close()
        if let watcher, let watch = configuration.watch {
            await watcher.stop()
            log.log(.info, WatchOptions.summary(watcher.statistics, server: watch.server))
        }
    }

    /// Cuts the proxy's requests and tunnels still in flight at once (a second SIGINT or SIGTERM while
    /// ``stop(grace:)`` waits for them).
    public func cutTransfers() async {
        await proxy?.proxy.stop(grace: .zero)
    }

    /// Starts one DNS server per address, printing where each listens; on a failure, stops those already
    /// started.
    func startDNS(_ addresses: [SocketAddress], _ dns: ServiceConfiguration.DNS, _ responder: DNSResponder) async
        -> Result<[(address: SocketAddress, server: DNSServer)], DNSServerError>
    {
        var servers: [(address: SocketAddress, server: DNSServer)] = []
        for address in addresses {
            let server = DNSServer(configuration: dns.configuration(for: address), responder: responder)
            do throws(DNSServerError) {
                for bound in try server.start() { log.log(.info, "listening on \(bound) (DNS over UDP and TCP)") }
                servers.append((address, server))
            } catch {
                for (_, started) in servers { await started.stop() }
                return .failure(error)
            }
        }
        return .success(servers)
    }

    /// Starts the control socket's server at `path`, printing where it listens.
    func startControl(_ path: String) -> Result<ControlServer, ControlSocketError> {
        let (status, log) = (status, log)
        do throws(ControlSocketError) {
            let server = try ControlServer(path: path) { request in
                log.log(.debug, "control: \(request)")
                return status.answer(request)
            }
            log.log(.info, "listening on \(path) (control)")
            return .success(server)
        } catch {
            return .failure(error)
        }
    }

    /// Starts the metrics endpoint `options` describe serving ``metrics``, printing where it listens.
    func startEndpoint(_ options: MetricsOptions) -> Result<(endpoint: MetricsEndpoint, address: SocketAddress)?, ListenError> {
        guard let metrics else { return .success(nil) }
        do throws(ListenError) {
            return .success(try options.start(metrics, log: log))
        } catch {
            return .failure(error)
        }
    }

    /// Gives the control socket what changed: the listeners, the reload count.
    func publishStatus() {
        status.update(ServiceStatus.Snapshot(responder: responder,
                                             dnsListeners: dnsServers.flatMap { $0.server.boundAddresses.map(\.description) },
                                             proxy: proxy?.address.description, reloads: reloads, metrics: metrics))
    }

    /// Starts the proxy `options` describe on the cache, printing where it listens.
    func startProxy(_ options: ProxyOptions, _ settings: ServiceConfiguration) -> Result<RunningProxy, ListenError> {
        // The service's rules, whatever the proxy's configuration held (the command line puts the same there).
        var options = options
        options.configuration.rules = settings.rules
        do throws(ListenError) {
            let started = try options.start(resolver: FamilyResolver(inner: cache, family: settings.family),
                                            metrics: counters.proxy, accessLog: accessLog)
            log.log(.info, "listening on \(started.address)" + (settings.dns == nil ? "" : " (HTTP proxy)"))
            return .success(started)
        } catch {
            return .failure(error)
        }
    }
}

extension RunningProxy {
    /// Stops a proxy a reload replaced: its requests and tunnels in flight get the grace period, then
    /// its access log is flushed. Quietly: the service goes on.
    package func retire() async {
        await proxy.stop(grace: grace)
        _ = await accessLog.finish(within: .seconds(2))
    }
}
