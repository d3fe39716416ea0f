import HostPin
import HostPinDNS
import HostPinNet

/// What a long-running command (`serve`, `proxy`) runs with: everything its command line and
/// configuration file say, parsed and checked. A reload parses them again into a new value and applies
/// the difference (``Service``).
struct ServiceSettings: Sendable {
    /// The DNS stub's side (`serve`); `nil` for `proxy`.
    struct DNS: Sendable, Equatable {
        /// Where to answer; repeats and port 0 allowed.
        var listenAddresses: [SocketAddress]
        /// `--allow-remote`: listeners other than loopback, rate-limited UDP clients.
        var allowRemote: Bool
        /// How a blocked name is answered.
        var blockedAnswer: BlockedAnswer

        /// The server configuration for one of ``listenAddresses``.
        func configuration(for address: SocketAddress) -> DNSServer.Configuration {
            var configuration = DNSServer.Configuration()
            configuration.listenAddresses = [address]
            configuration.allowRemote = allowRemote
            return configuration
        }
    }

    var dns: DNS?
    /// The proxy's options when it runs (`proxy`, `serve --listen`).
    var proxyOptions: ProxyOptions?
    var resolverConfiguration: TrustedResolver.Configuration
    /// The family the proxy pins (and `serve` pre-resolves besides A and AAAA).
    var family: AddressFamily
    var rules: Rules
    var cacheOptions: CacheOptions
    /// `--control-socket`, resolved to a path; `nil` without one.
    var controlSocket: String?
    /// `--metrics-listen`.
    var metrics: MetricsOptions
    /// `serve --watch-local` and its options; `nil` without it.
    var watch: WatchOptions?
    /// `--log-level`, `--log-format`, `--access-log`.
    var log: LogOptions
}

extension ProxyOptions {
    /// What a proxy keeps for its life once started: all its settings but the listening address and
    /// the rules (which a reload replaces in place).
    struct Fixed: Equatable {
        let allowRemote: Bool
        let allowPrivate: Bool
        let allowedConnectPorts: Set<UInt16>
        let maximumConnections: Int
        let connectTimeout: Duration
        let originTimeout: Duration
        let grace: Duration
    }

    var fixed: Fixed {
        Fixed(allowRemote: configuration.allowRemote, allowPrivate: configuration.allowPrivate,
              allowedConnectPorts: configuration.allowedConnectPorts, maximumConnections: configuration.maximumConnections,
              connectTimeout: configuration.connectTimeout, originTimeout: configuration.originTimeout, grace: grace)
    }
}
