import Foundation
import HostPin
import HostPinService
import HostPinProxy

/// `hostpin proxy`: runs the HTTP/CONNECT forward proxy (``ForwardProxy``) with pinned resolution until
/// SIGINT or SIGTERM, then stops it gracefully. A thin wrapper: parse, configure, start, print, wait.
struct ProxyCommand: ServiceCommand {
    static let name = "proxy"
    static let abstract = "Run an HTTP/CONNECT forward proxy that connects only to pinned addresses."
    static let usage = "hostpin proxy [--config FILE] [--listen IP:PORT] [--server IP:PORT|URL]... [--bootstrap NAME=IP[,IP...]]... "
        + "[--pin NAME=sha256//BASE64]... [--ca-file FILE] "
        + "[--dnssec validate|report|off] [--trust-anchor FILE]... [--insecure-domain NAME]... [--route DOMAIN=UPSTREAM[,UPSTREAM...]]... [--allow-remote] [--allow-private] "
        + "[--allow-connect-port PORT]... [--no-address-ranking] [--family 4|6|any] [--timeout SECONDS] [--max-connections N] [--grace SECONDS] "
        + "[--rules FILE] [--cache-file FILE] [--max-stale SECONDS] [--stale-answer-timeout SECONDS] [--cache-size N] "
        + "[--min-ttl SECONDS] [--max-ttl SECONDS] [--max-negative-ttl SECONDS] [--refresh-ahead FRACTION] [--preresolve FILE] "
        + "[--metrics-listen IP:PORT] [--control-socket PATH] [--no-network-watch] "
        + "[--log-level LEVEL] [--log-format text|json] [--access-log FILE]"
    static var help: String {
        """
        OVERVIEW: \(abstract)

        USAGE: \(usage)

        Clients use it as an HTTP proxy (curl -x http://127.0.0.1:8118 URL): absolute-form requests
        are sent to the target's pinned address with the right Host; CONNECT opens a tunnel to it, so
        TLS stays end to end.

        OPTIONS:
        \(ConfigOption.helpLines(width: 28))
          --listen IP:PORT            Where to listen (default \(Self.defaultListen); port 0 picks one).
          --allow-remote              Allow a listening address other than loopback.
          --allow-private             Allow targets that resolve to private, loopback or link-local
                                      addresses (RFC 6890); refused by default (DNS rebinding).
          --allow-connect-port PORT   Allow CONNECT to PORT as well as 443; repeatable.
          --no-address-ranking        Connect in the answer's order (Happy Eyeballs alone): no ranking
                                      by measured, verified connection times, no background probes,
                                      no sinkhole exclusion (README.md, "Address ranking").
          --rules FILE                Apply the interception rules in FILE (JSON; see README.md,
                                      "Rules") to every request: block (403), answer locally,
                                      redirect, pin to addresses (no DNS query; allowed even
                                      without --allow-private), edit header fields. CONNECT gets
                                      only the rules about a whole host (block, pin, pass, redirect
                                      to another host): the URL is inside TLS. A pass rule forwards
                                      the request unedited, still resolved through the trusted
                                      upstreams (the proxy never asks the system's resolver). A bad
                                      file is a usage error (2) listing every problem.
          --server IP[:PORT]|URL      A trusted upstream: IP[:PORT] (plain DNS), https://NAME[:PORT]/PATH
                                      (DNS over HTTPS) or tls://NAME[:PORT] (DNS over TLS); repeat
                                      for failover, tried in order. Wins over HOSTPIN_UPSTREAMS.
          --bootstrap NAME=IP[,IP...] Where an encrypted upstream's NAME is; repeatable (see
                                      'hostpin lookup --help').
          --pin NAME=sha256//BASE64   Accept NAME's certificate only with this public key; repeatable.
          --ca-file FILE              Also trust the CA certificates in FILE (PEM) for DoH and DoT.
        \(DNSSECOptions.helpLines(width: 28))
          --family 4|6|any            Pin A (4), AAAA (6) or both (any; the default: IPv6 first, IPv4
                                      after 250 ms without a connection, RFC 8305).
          --timeout SECONDS           How long an origin may take to accept a connection and begin its
                                      response (default \(Int(Self.defaultTimeoutSeconds))); resolving a name
                                      takes at most 5 s of it.
          --max-connections N         Serve at most N client connections at once (default \(Self.defaultMaximumConnections));
                                      more are answered 503 and closed. Each needs up to two open
                                      files: keep ulimit -n above 2N.
          --grace SECONDS             On SIGINT or SIGTERM, let requests and tunnels in flight run up
                                      to this long (default \(Int(Self.defaultGraceSeconds))), then cut them; 0 or a second
                                      signal cuts at once. New connections are refused and idle
                                      ones closed at once.
        \(CacheOptions.helpLines(preresolve: true, width: 28))
        \(SharedCacheOptions.helpLines(width: 28))
        \(MetricsOptions.helpLines(width: 28))
        \(ControlSocketPath.helpLines(width: 28))
        \(ServiceOptionGroups.networkWatchHelpLines(width: 28))
        \(LogOptions.helpLines(width: 28))
          -h, --help                  Show this help.

        OUTPUT:
          'listening on IP:PORT' on standard error once bound ('listening on IP:PORT (metrics)'
          for --metrics-listen); one access-log line per request on
          standard output: time client method target pinned-address status bytes duration rules
          source (rules: the rules that decided, as rules[2], or -; source: where the addresses
          came from: upstream, cache, literal, pin, or -). The log
          never makes a connection wait: lines queue in memory (1 MiB) while standard output is slow,
          and when the queue is full they are dropped and counted ('hostpin: N access-log lines
          dropped ...' in their place).

        \(UpstreamSelection.helpSection)

        \(signalsHelp)

        EXIT STATUS:
        \(ExitStatus.success.helpLine(meaning: "stopped by SIGINT or SIGTERM"))
        \(ExitStatus.notFound.helpLine(meaning: "the proxy could not listen (address in use, not allowed)"))
        \(ExitStatus.usage.helpLine)
        """
    }

    static let defaultListen = ProxyOptions.defaultListen
    static let defaultTimeoutSeconds = ProxyOptions.defaultTimeoutSeconds
    static let defaultMaximumConnections = ProxyOptions.defaultMaximumConnections
    static let defaultGraceSeconds = ProxyOptions.defaultGraceSeconds

    /// What the service runs with.
    let configuration: ServiceConfiguration
    /// The arguments, parsed again (with the configuration file read again) on SIGHUP.
    let commandLine: [String]

    init(parsing parser: inout OptionParser) throws(UsageError) {
        commandLine = parser.commandLine
        try ConfigOption.apply(to: &parser, command: Self.name)
        let listenAddress = try parser.value("--listen", as: SocketAddress.self, expected: "IP:PORT (IPv6 as [IP]:PORT)")
            ?? SocketAddress(Self.defaultListen)!
        let allowRemote = try parser.flag("--allow-remote")
        let timeout = try parser.values("--timeout") { text throws(UsageError) -> Duration in
            guard let seconds = Double(text), seconds.isFinite, seconds >= 0.001, seconds <= 3600 else {
                throw .invalidValue(option: "--timeout", reason: "'\(text)' is not a number of seconds from 0.001 to 3600")
            }
            return .milliseconds(Int64((seconds * 1000).rounded()))
        }.last ?? .milliseconds(Int64(Self.defaultTimeoutSeconds * 1000))
        let rules = try RulesOption.parse(&parser)
        var proxyOptions = try ProxyOptions(parsing: &parser, listenAddress: listenAddress, allowRemote: allowRemote,
                                            rules: rules, timeout: timeout)
        let groups = try ServiceOptionGroups(parsing: &parser, allowRemote: allowRemote, watchBeside: nil)
        // --ca-file is for every TLS check HostPin makes: the CONNECT targets' ranking probe's too.
        proxyOptions.configuration.probe?.caFile = groups.trusted.caFile
        var resolverConfiguration = groups.trusted.configuration(useTCP: false)
        resolverConfiguration.budget = min(resolverConfiguration.budget, timeout)
        var configuration = ServiceConfiguration(dns: nil, proxyOptions: proxyOptions, resolverConfiguration: resolverConfiguration,
                                             family: groups.trusted.family, rules: rules, cacheOptions: groups.cache,
                                             controlSocket: groups.controlSocket, metrics: groups.metrics, watch: nil, log: groups.log,
                                             networkWatch: groups.networkWatch)
        configuration.sharedCache = groups.sharedCache
        self.configuration = configuration
    }
}

/// Waiting for SIGINT or SIGTERM. A C signal handler writes one byte to a pipe (the self-pipe trick:
/// `write` is async-signal-safe), and a Dispatch thread (not one of Swift's cooperative pool) blocks
/// reading it. A handler is installed rather than ignoring the signals for a Dispatch signal source,
/// because an ignored signal is discarded by the kernel on any thread that does not block it.
enum StopSignal {
    /// Installs the handler: from here on SIGINT and SIGTERM are kept for ``wait()`` instead of ending the
    /// process. Called before the service starts — it says it is listening before ``wait()`` runs, and a
    /// signal sent at once would otherwise find the default action (exit by the signal, not 0).
    static func install() {
        _ = stopPipe
        signal(SIGINT, onStopSignal)
        signal(SIGTERM, onStopSignal)
    }

    /// Waits for SIGINT or SIGTERM (one since ``install()``, or the next).
    static func wait() async {
        let pipe = stopPipe
        install()
        await Blocking.run {
            var byte: UInt8 = 0
            while read(pipe.read, &byte, 1) < 0 && errno == EINTR {}
        }
    }
}

/// The pipe ``onStopSignal(_:)`` writes to; made before the handler is installed.
private let stopPipe: (read: Int32, write: Int32) = {
    var descriptors: [Int32] = [-1, -1]
    _ = pipe(&descriptors)
    return (descriptors[0], descriptors[1])
}()

/// The SIGINT/SIGTERM handler: only async-signal-safe work, one `write`.
private func onStopSignal(_: Int32) {
    var byte: UInt8 = 1
    _ = write(stopPipe.write, &byte, 1)
}
