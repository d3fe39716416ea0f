import Foundation
import HostPin
import HostPinDNS
import HostPinNet
import HostPinProxy

/// What a long-running command runs — `serve`'s DNS stub (one ``DNSServer`` per listening address) and
/// proxy, or `proxy`'s proxy — on one ``CachingResolver`` that lives as long as the process: a reload
/// (SIGHUP, ``reload(_:)``) swaps the upstreams behind it and the rules in front of it, and changes the
/// listeners whose addresses changed, but never empties the cache.
///
/// An actor: the reload loop and the final stop run one after the other (``run(_:reparse:)`` waits for
/// a reload under way before stopping), and the control socket reads its state between them.
actor Service {
    // Actor-isolated state; changed only here and by the reload (Service+Reload.swift).
    /// The settings in force.
    var settings: ServiceSettings
    /// The cache, for the life of the process.
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
    /// The stub's and the proxy's counters, made at start when the metrics endpoint is on (else nothing
    /// is counted, for the life of the process).
    let counters: (dns: DNSQueryMetrics?, proxy: ProxyMetrics?)
    /// What the metrics endpoint serves; `nil` when it was off at start.
    var metrics: ServiceMetrics?
    /// The metrics endpoint, with `--metrics-listen`.
    var endpoint: MetricsEndpoint?
    /// The watch of the local resolver (`serve --watch-local`), for the life of the process.
    var watcher: LocalResolverWatch?
    /// Where every proxy of the process writes its access log (`--access-log FILE` as at start, or
    /// standard output).
    var accessLog = STDOUT_FILENO

    private init(settings: ServiceSettings, trusted: TrustedResolver) {
        self.settings = settings
        upstream = UpstreamSwitch(trusted)
        cache = CachingResolver(upstream: upstream, cache: settings.cacheOptions.makeCache(refreshAhead: true))
        status = ServiceStatus(cache: cache, upstream: upstream,
                               snapshot: ServiceStatus.Snapshot(responder: nil, dnsListeners: [], proxy: nil, reloads: 0))
        counters = settings.metrics.counters(dns: settings.dns != nil, proxy: settings.proxyOptions != nil)
    }

    /// Runs the service `settings` describe until SIGINT or SIGTERM, reloading on SIGHUP with the settings
    /// `reparse` reads (the command line and configuration file, parsed anew).
    ///
    /// - Returns: 0 after a clean stop, 1 when a listener cannot be set up, 3 when the trusted resolver
    ///   or the watched local resolver cannot.
    static func run(_ settings: ServiceSettings,
                    reparse: @escaping @Sendable () throws(UsageError) -> ServiceSettings) async -> ExitStatus {
        // First: from here on SIGHUP asks for a reload instead of ending the process.
        let requests = ReloadSignal.requests()
        settings.log.apply()
        let trusted: TrustedResolver
        do throws(ResolutionError) {
            trusted = try await TrustedOptions.makeResolver(settings.resolverConfiguration)
        } catch {
            Console.error("hostpin: \(error)")
            return .upstreamFailure
        }
        let service = Service(settings: settings, trusted: trusted)
        if let failure = await service.start() { return failure }
        let reloader = Task {
            for await _ in requests { await service.reload(reparse) }
        }
        await StopSignal.wait()
        reloader.cancel()
        await reloader.value
        await service.stop()
        return .success
    }

    /// Loads the cache file, pre-resolves, and starts the listeners, printing where each listens.
    ///
    /// - Returns: The exit status when something could not start (everything started is stopped), else `nil`.
    private func start() async -> ExitStatus? {
        switch settings.log.openAccessLog() {
        case .success(let descriptor): accessLog = descriptor
        case .failure(let error):
            Console.error("hostpin: \(error)")
            return .notFound
        }
        if let watch = settings.watch {
            do throws(ResolutionError) {
                watcher = try watch.start(trusted: upstream)
            } catch {
                Console.error("hostpin: the local resolver to watch: \(error)")
                return .upstreamFailure
            }
        }
        keeper = await settings.cacheOptions.start(cache, family: settings.dns == nil ? settings.family : .v4,
                                                   periodicSaving: true)
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
            switch await Self.startDNS(dns.listenAddresses, dns, responder) {
            case .success(let servers): dnsServers = servers
            case .failure(let error):
                Console.error("hostpin: \(error)")
                if case .bind = error {
                    Console.error("hostpin: choose another address with --dns-listen IP:PORT: any address of 127.0.0.0/8 "
                                  + "will do (127.0.0.53:53), or a port above 1023 (127.0.0.1:5300)")
                }
                await keeper?.finish()
                await watcher?.stop()
                return .notFound
            }
        }
        if let options = settings.proxyOptions {
            switch startProxy(options, settings) {
            case .success(let started): proxy = started
            case .failure(let error):
                Console.error("hostpin: \(error)")
                for (_, server) in dnsServers { await server.stop() }
                await keeper?.finish()
                await watcher?.stop()
                return .notFound
            }
        }
        if settings.metrics.listenAddress != nil {
            let upstream = upstream
            metrics = ServiceMetrics(currentResolver: { upstream.current }, cache: cache.cache, dns: counters.dns,
                                     proxy: counters.proxy, watch: watcher)
            switch startEndpoint(settings.metrics) {
            case .success(let started): endpoint = started
            case .failure(let error):
                Console.error("hostpin: --metrics-listen: \(error)")
                await proxy?.proxy.stop()
                for (_, server) in dnsServers { await server.stop() }
                await keeper?.finish()
                await watcher?.stop()
                return .notFound
            }
        }
        publishStatus()
        if let path = settings.controlSocket {
            switch startControl(path) {
            case .success(let server): control = server
            case .failure(let error):
                Console.error("hostpin: \(error)")
                await endpoint?.stop()
                await proxy?.retire()
                for (_, server) in dnsServers { await server.stop() }
                await keeper?.finish()
                await watcher?.stop()
                return .notFound
            }
        }
        return nil
    }

    /// Stops every listener (the proxy with its grace period; the metrics endpoint says it is stopping
    /// until then), writes the cache file once more, and says what the watch counted.
    private func stop() async {
        metrics?.markStopping()
        await control?.stop()
        await proxy?.stop()
        for (_, server) in dnsServers { await server.stop() }
        await endpoint?.stop()
        await keeper?.finish()
        if let watcher, let watch = settings.watch {
            await watcher.stop()
            Console.log(.info, WatchOptions.summary(watcher.statistics, server: watch.server))
        }
    }

    /// Starts one DNS server per address, printing where each listens; on a failure, stops those already
    /// started.
    static func startDNS(_ addresses: [SocketAddress], _ dns: ServiceSettings.DNS, _ responder: DNSResponder) async
        -> Result<[(address: SocketAddress, server: DNSServer)], DNSServerError>
    {
        var servers: [(address: SocketAddress, server: DNSServer)] = []
        for address in addresses {
            let server = DNSServer(configuration: dns.configuration(for: address), responder: responder)
            do throws(DNSServerError) {
                for bound in try server.start() { Console.log(.info, "listening on \(bound) (DNS over UDP and TCP)") }
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
        let status = status
        do throws(ControlSocketError) {
            let server = try ControlServer(path: path) { request in
                Console.log(.debug, "control: \(request)")
                return status.answer(request)
            }
            Console.log(.info, "listening on \(path) (control)")
            return .success(server)
        } catch {
            return .failure(error)
        }
    }

    /// Starts the metrics endpoint `options` describe serving ``metrics``, printing where it listens.
    func startEndpoint(_ options: MetricsOptions) -> Result<MetricsEndpoint?, ListenError> {
        guard let metrics else { return .success(nil) }
        do throws(ListenError) {
            return .success(try options.start(metrics))
        } catch {
            return .failure(error)
        }
    }

    /// Gives the control socket what changed: the listeners, the reload count.
    func publishStatus() {
        status.update(ServiceStatus.Snapshot(responder: responder,
                                             dnsListeners: dnsServers.flatMap { $0.server.boundAddresses.map(\.description) },
                                             proxy: proxy?.address.description, reloads: reloads))
    }

    /// Starts the proxy `options` describe on the cache, printing where it listens.
    func startProxy(_ options: ProxyOptions, _ settings: ServiceSettings) -> Result<RunningProxy, ListenError> {
        do throws(ListenError) {
            let started = try options.start(resolver: FamilyResolver(inner: cache, family: settings.family),
                                            metrics: counters.proxy, accessLog: accessLog)
            Console.log(.info, "listening on \(started.address)" + (settings.dns == nil ? "" : " (HTTP proxy)"))
            return .success(started)
        } catch {
            return .failure(error)
        }
    }
}

extension RunningProxy {
    /// Stops a proxy a reload replaced: its requests and tunnels in flight get the grace period, then
    /// its access log is flushed. Quietly: the service goes on.
    func retire() async {
        await proxy.stop(grace: grace)
        _ = await accessLog.finish(within: .seconds(2))
    }
}
