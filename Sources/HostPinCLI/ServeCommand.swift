import HostPin
import HostPinService
import HostPinDNS
import HostPinProxy

/// `hostpin serve`: the DNS stub (``DNSServer``) on UDP and TCP, and with `--listen` the forward proxy
/// (``ForwardProxy``) in the same process, both on one ``CachingResolver``, until SIGINT or SIGTERM.
/// A thin wrapper: parse, configure, start, print, wait.
struct ServeCommand: ServiceCommand {
    static let name = "serve"
    static let abstract = "Run a local DNS stub answering from the trusted cache (and, with --listen, the proxy)."
    static let usage = "hostpin serve [--config FILE] [--dns-listen IP:PORT]... [--listen IP:PORT] [--server IP:PORT|URL]... "
        + "[--bootstrap NAME=IP[,IP...]]... [--pin NAME=sha256//BASE64]... [--ca-file FILE] "
        + "[--dnssec validate|report|off] [--trust-anchor FILE]... [--insecure-domain NAME]... [--route DOMAIN=UPSTREAM[,UPSTREAM...]]... [--rules FILE] "
        + "[--blocked-answer nxdomain|unspecified] [--allow-remote] [--allow-private] [--allow-connect-port PORT]... "
        + "[--no-address-ranking] [--max-connections N] [--grace SECONDS] [--family 4|6|any] [--timeout SECONDS] "
        + "[--cache-file FILE] [--max-stale SECONDS] [--stale-answer-timeout SECONDS] [--cache-size N] [--min-ttl SECONDS] "
        + "[--max-ttl SECONDS] [--max-negative-ttl SECONDS] [--refresh-ahead FRACTION] [--preresolve FILE] "
        + "[--watch-local [IP:PORT] [--watch-interval SECONDS] [--watch-name-interval SECONDS] [--hijack-list FILE] "
        + "[--ordinary CIDR]... [--no-probe]] "
        + "[--metrics-listen IP:PORT] [--control-socket PATH] [--no-network-watch] "
        + "[--log-level LEVEL] [--log-format text|json] [--access-log FILE]"
    static var help: String {
        """
        OVERVIEW: \(abstract)

        USAGE: \(usage)

        Programs that use the system's resolver reach the trusted upstreams through it: name the stub
        in /etc/resolv.conf (nameserver 127.0.0.53, with --dns-listen 127.0.0.53:53). A and AAAA are
        answered from the trusted cache with their CNAME chain and the TTL left; NXDOMAIN and NODATA as
        the upstreams say, with the CNAME chain and the zone's SOA record (RFC 2308); ANY with one
        HINFO record (RFC 8482); other types (MX, TXT, SRV, HTTPS, PTR, ...) are forwarded to the
        trusted upstreams, their replies relayed and cached for their TTL.

        OPTIONS:
        \(ConfigOption.helpLines(width: 21))
          --dns-listen IP:PORT Answer DNS on IP:PORT over UDP and TCP (default \(Self.defaultDNSListen));
                               repeatable; port 0 picks a free port.
          --listen IP:PORT     Also run the HTTP/CONNECT forward proxy on IP:PORT, on the same cache:
                               the same proxy as 'hostpin proxy' (see its --help), with the same
                               --rules, access log, --allow-connect-port, --max-connections and
                               --grace.
          --rules FILE         Apply the rules in FILE (JSON; README.md, "Rules") to DNS answers: a
                               blocked host is answered as --blocked-answer says, a pinned one with
                               its addresses; and, with --listen, to every proxy request. A bad file
                               is a usage error (2).
          --blocked-answer nxdomain|unspecified
                               Answer A and AAAA for a blocked host with NXDOMAIN (the default) or
                               with 0.0.0.0 and ::.
          --allow-remote       Allow listening addresses other than loopback; UDP clients are then
                               limited to 100 queries per second each (bursts of 200).
          --allow-private      Proxy: allow targets at private, loopback or link-local addresses
                               (RFC 6890); refused by default (DNS rebinding).
          --allow-connect-port PORT
                               Proxy: allow CONNECT to PORT as well as 443; repeatable.
          --max-connections N  Proxy: serve at most N client connections at once (default \(ProxyOptions.defaultMaximumConnections)).
          --grace SECONDS      Proxy: on SIGINT or SIGTERM, let requests and tunnels in flight run up
                               to this long (default \(Int(ProxyOptions.defaultGraceSeconds))); a second signal cuts them.
          --no-address-ranking Proxy: connect in the answer's order (no ranking, no probes).
                               These four without --listen are a usage error (2).
        \(TrustedOptions.helpLines)
                               (--family applies to the proxy; DNS clients ask for A or AAAA.)
        \(CacheOptions.helpLines(preresolve: true, width: 21))
        \(SharedCacheOptions.helpLines(width: 21))
                               Each name's A and AAAA are pre-resolved (and, with --listen, the
                               proxy's --family).
          --watch-local [IP:PORT]
                               Watch the local resolver for hijacking: in the background, compare a
                               sample of the A and AAAA answers given with what IP:PORT answers (by
                               default the first nameserver of /etc/resolv.conf, read, never written;
                               it must not be this stub), and say once per name found hijacked why.
                               Its answers are never used.
          --watch-interval SECONDS
                               At most one comparison per SECONDS overall (default \(Self.watchDefault(\.overallInterval)); 0: no limit).
          --watch-name-interval SECONDS
                               At most one comparison per name per SECONDS (default \(Self.watchDefault(\.nameInterval))).
        \(HijackOptions.detectorHelpLines)
                               These five without --watch-local are a usage error (2).
        \(MetricsOptions.helpLines(width: 21))
        \(ControlSocketPath.helpLines(width: 21))
        \(ServiceOptionGroups.networkWatchHelpLines(width: 21))
        \(LogOptions.helpLines(width: 21))
          -h, --help           Show this help.

        OUTPUT:
          'listening on IP:PORT (DNS over UDP and TCP)' on standard error for each DNS address once
          bound, 'listening on IP:PORT (HTTP proxy)' for the proxy and 'listening on IP:PORT
          (metrics)' for --metrics-listen; the proxy's access log on
          standard output, one line per request (see 'hostpin proxy --help'). With --watch-local, on
          standard error: 'watching the local resolver IP:PORT ...' at start; 'hostpin serve: the local
          resolver IP:PORT hijacks NAME (A): local ADDRESS, trusted ADDRESS: CODE: sentence; ...' once
          per name found hijacked; what the watch counted when it stops.

        \(UpstreamSelection.helpSection)

        \(signalsHelp)

        EXIT STATUS:
        \(ExitStatus.success.helpLine(meaning: "stopped by SIGINT or SIGTERM"))
        \(ExitStatus.notFound.helpLine(meaning: "an address could not be bound (in use, a port below 1024 without privilege)"))
        \(ExitStatus.usage.helpLine)
        \(ExitStatus.upstreamFailure.helpLine(meaning: "the trusted resolver could not be set up"))
        """
    }

    static let defaultDNSListen = ServiceConfiguration.DNS.defaultListen

    /// What the service runs with.
    let configuration: ServiceConfiguration
    /// The arguments, parsed again (with the configuration file read again) on SIGHUP.
    let commandLine: [String]

    init(parsing parser: inout OptionParser) throws(UsageError) {
        commandLine = parser.commandLine
        try ConfigOption.apply(to: &parser, command: Self.name)
        let expected = "IP:PORT (IPv6 as [IP]:PORT)"
        let dnsAddresses = try parser.values("--dns-listen", as: SocketAddress.self, expected: expected)
        var dns = ServiceConfiguration.DNS(listenAddresses: dnsAddresses.isEmpty ? [SocketAddress(Self.defaultDNSListen)!] : dnsAddresses)
        dns.allowRemote = try parser.flag("--allow-remote")
        let proxyAddress = try parser.value("--listen", as: SocketAddress.self, expected: expected)
        dns.blockedAnswer = try parser.values("--blocked-answer") { text throws(UsageError) -> BlockedAnswer in
            guard let answer = BlockedAnswer(rawValue: text) else {
                throw .invalidValue(option: "--blocked-answer", reason: "'\(text)' is not nxdomain or unspecified")
            }
            return answer
        }.last ?? .nxdomain
        let rules = try RulesOption.parse(&parser)
        // Parsed without --listen too, so that a proxy-only option there is named rather than unknown.
        var proxy = try ProxyOptions(parsing: &parser, listenAddress: proxyAddress ?? SocketAddress(ProxyOptions.defaultListen)!,
                                     allowRemote: dns.allowRemote, rules: rules,
                                     timeout: .milliseconds(Int64(ProxyOptions.defaultTimeoutSeconds * 1000)))
        // A configuration file's proxy keys wait for a proxy to apply to; the command line's are a mistake.
        if proxyAddress == nil, let option = proxy.given.first(where: parser.given.contains) {
            throw .conflict("\(option) applies to the proxy: add --listen IP:PORT to run it")
        }
        let groups = try ServiceOptionGroups(parsing: &parser, allowRemote: dns.allowRemote, watchBeside: dns.listenAddresses)
        // --ca-file is for every TLS check HostPin makes: the CONNECT targets' ranking probe's too.
        proxy.configuration.probe?.caFile = groups.trusted.caFile
        if !dns.allowRemote {
            for address in dns.listenAddresses where address.address.specialPurposeBlock?.name != "loopback" {
                throw .invalidValue(option: "--dns-listen", reason: "\(address) is not a loopback address; "
                                    + "add --allow-remote to let other hosts use it")
            }
        }
        var configuration = ServiceConfiguration(dns: dns, proxyOptions: proxyAddress == nil ? nil : proxy,
                                             resolverConfiguration: groups.trusted.configuration(useTCP: false),
                                             family: groups.trusted.family, rules: rules, cacheOptions: groups.cache,
                                             controlSocket: groups.controlSocket, metrics: groups.metrics, watch: groups.watch,
                                             log: groups.log, networkWatch: groups.networkWatch)
        configuration.sharedCache = groups.sharedCache
        self.configuration = configuration
    }

    /// A default of the watch's configuration, in seconds, for the help.
    private static func watchDefault(_ setting: KeyPath<LocalResolverWatch.Configuration, Duration>) -> String {
        "\(LocalResolverWatch.Configuration()[keyPath: setting].components.seconds)"
    }
}
