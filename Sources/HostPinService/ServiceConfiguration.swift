import HostPin
import HostPinDNS
import HostPinNet

/// What a running ``Service`` runs with: the DNS stub's side, the proxy's, the trusted upstreams, the
/// rules, the cache, the control socket, the metrics endpoint, the watch of the local resolver and the
/// logs. `hostpin serve` and `hostpin proxy` make one from their command line and configuration file
/// (the same schema, the same defaults: ``ConfigSchema``, checked at every key path); a program that
/// embeds the service builds one in code. A reload (``Service/reload(to:)``) is a new value, of which
/// the difference is applied.
public struct ServiceConfiguration: Sendable {
    /// The DNS stub's side (`serve`); `nil` runs no stub.
    public struct DNS: Sendable, Equatable {
        /// Where `hostpin serve` answers without `--dns-listen`.
        package static let defaultListen = "127.0.0.1:53"

        /// Where to answer; repeats and port 0 allowed.
        public var listenAddresses: [SocketAddress]
        /// `--allow-remote`: listeners other than loopback, rate-limited UDP clients.
        public var allowRemote: Bool
        /// How a blocked name is answered.
        public var blockedAnswer: BlockedAnswer

        /// The stub on `listenAddresses`, loopback only unless `allowRemote`, a blocked name answered NXDOMAIN.
        public init(listenAddresses: [SocketAddress], allowRemote: Bool = false, blockedAnswer: BlockedAnswer = .nxdomain) {
            self.listenAddresses = listenAddresses
            self.allowRemote = allowRemote
            self.blockedAnswer = blockedAnswer
        }

        /// The server configuration for one of ``listenAddresses``.
        package func configuration(for address: SocketAddress) -> DNSServer.Configuration {
            var configuration = DNSServer.Configuration()
            configuration.listenAddresses = [address]
            configuration.allowRemote = allowRemote
            return configuration
        }
    }

    /// The stub (`serve`); `nil` for `proxy`.
    public var dns: DNS?
    /// The proxy's options when it runs (`proxy`, `serve --listen`).
    public var proxyOptions: ProxyOptions?
    /// The trusted upstreams and how they are asked.
    public var resolverConfiguration: TrustedResolver.Configuration
    /// The family the proxy pins (and `serve` pre-resolves besides A and AAAA).
    public var family: AddressFamily
    /// The rules applied to the stub's answers and the proxy's requests.
    public var rules: Rules
    /// The cache's file, serve-stale, pre-resolve and limits.
    public var cacheOptions: CacheOptions
    /// `--control-socket`, resolved to a path; `nil` without one.
    public var controlSocket: String?
    /// `--metrics-listen`.
    public var metrics: MetricsOptions
    /// `serve --watch-local` and its options; `nil` without it.
    public var watch: WatchOptions?
    /// `--log-level`, `--log-format`, `--access-log`.
    public var log: LogOptions
    /// `--shared-cache` and its secret and password: the second level under the memory cache; `nil`
    /// without one. Made once at start: a reload that changes it says it waits for a restart.
    public var sharedCache: SharedCacheOptions?
    /// Whether the service watches the network for changes and reacts (issue 30; `--no-network-watch`
    /// turns it off): on by default. Read at start only.
    public var networkWatch = true

    /// A service on `upstreams` that runs nothing yet: set ``dns`` and/or ``proxyOptions``. Every other
    /// setting has the default the command line and the configuration file have (5 s per resolution,
    /// both families, no rules, the cache's defaults, no control socket, no metrics, no watch, info).
    public init(upstreams: [Upstream]) {
        resolverConfiguration = TrustedOptions.configuration(upstreams: upstreams, budget: TrustedOptions.defaultBudget,
                                                             useTCP: false)
        family = .any
        rules = Rules()
        cacheOptions = CacheOptions()
        metrics = MetricsOptions()
        log = LogOptions()
    }

    package init(dns: DNS?, proxyOptions: ProxyOptions?, resolverConfiguration: TrustedResolver.Configuration,
                 family: AddressFamily, rules: Rules, cacheOptions: CacheOptions, controlSocket: String?,
                 metrics: MetricsOptions, watch: WatchOptions?, log: LogOptions, networkWatch: Bool = true) {
        self.networkWatch = networkWatch
        self.dns = dns
        self.proxyOptions = proxyOptions
        self.resolverConfiguration = resolverConfiguration
        self.family = family
        self.rules = rules
        self.cacheOptions = cacheOptions
        self.controlSocket = controlSocket
        self.metrics = metrics
        self.watch = watch
        self.log = log
    }
}

extension ProxyOptions {
    /// What a proxy keeps for its life once started: all its settings but the listening address and
    /// the rules (which a reload replaces in place).
    package struct Fixed: Equatable {
        package let allowRemote: Bool
        package let allowPrivate: Bool
        package let allowedConnectPorts: Set<UInt16>
        package let maximumConnections: Int
        package let connectTimeout: Duration
        package let originTimeout: Duration
        package let grace: Duration
    }

    package var fixed: Fixed {
        Fixed(allowRemote: configuration.allowRemote, allowPrivate: configuration.allowPrivate,
              allowedConnectPorts: configuration.allowedConnectPorts, maximumConnections: configuration.maximumConnections,
              connectTimeout: configuration.connectTimeout, originTimeout: configuration.originTimeout, grace: grace)
    }
}
