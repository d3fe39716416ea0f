import HostPin

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension ForwardProxy {
    /// How a ``ForwardProxy`` listens, what it refuses, and how long it waits. Safe by default: loopback
    /// only, CONNECT to 443 only, no special-purpose (private, loopback, link-local) targets.
    public struct Configuration: Sendable {
        /// Where to listen; port 0 picks a free port (read it from ``ForwardProxy/boundAddress``).
        /// Default: `127.0.0.1:8118`.
        public var listenAddress = SocketAddress(address: .loopbackV4, port: 8118)
        /// Allow a listening address that is not loopback, so other hosts can use the proxy. Default: false.
        public var allowRemote = false
        /// Allow targets whose pinned addresses are special-purpose (RFC 6890: private, loopback,
        /// link-local, …). Off by default: a public name resolving there is DNS rebinding
        /// (``RebindingGuard``). A `pin` rule's addresses are allowed either way: the operator chose them.
        public var allowPrivate = false
        /// The interception rules every request is decided by first (README.md, "Rules"): plain-HTTP
        /// requests get every action, CONNECT tunnels only what a rule says about the whole host (block,
        /// pin, pass, redirect to another host). A `pass` rule cannot hand a request to the system's
        /// resolver, which the proxy never asks: the host is resolved through the trusted upstreams as if
        /// no rule applied, without header edits. The proxy starts with these; ``ForwardProxy/liveRules``
        /// holds those in force. Default: none.
        public var rules = Rules()
        /// The ports CONNECT may reach. Default: 443 only.
        public var allowedConnectPorts: Set<UInt16> = [443]
        /// How long one pinned address may take to accept a TCP connection. Default: 10 seconds.
        public var connectTimeout: Duration = .seconds(10)
        /// How a name's addresses are raced (RFC 8305): the preferred family first, the next address
        /// after the attempt delay with no connection yet or at once when an attempt fails, the first to
        /// connect wins. Default: IPv6 first, 250 ms.
        public var happyEyeballs = HappyEyeballs()
        /// Where the proxy learns how fast each (address, port) connects and ranks a name's addresses by
        /// it before ``happyEyeballs`` orders the families (RFC 8305 §4; ``AddressRanking``): the fastest
        /// first, those excluded for the name as likely sinkholes not at all, a special-purpose address
        /// never above a public one. Default: a new ranking for this configuration (every proxy started
        /// with it, and its copies, shares it; give the service's to share more); `nil` keeps the answer
        /// order.
        public var ranking: SharedAddressRanking? = SharedAddressRanking()
        /// The background probes that feed ``ranking`` what the proxy's own connections do not show
        /// (``RankingProbe``). A tunnel's TLS is the client's, end to end: for a CONNECT to one of
        /// ``probedPorts`` the proxy handshakes with each of the target's addresses itself, verifying the
        /// target name's certificate and sending no request, and records verified handshake times, the
        /// timeout for an address that did not answer, and an exclusion (counted in ``metrics``, one
        /// ``diagnosticLog`` line) for one whose certificate failed the check. A plain-HTTP request
        /// measures only the address that won its race: when the target has another without a time, the
        /// proxy times a TCP connection to each. Default: on, 2 s per address, each name and port once per
        /// 5 minutes, 4 names at once; `nil`, or no ``ranking``, turns it off.
        public var probe: RankingProbe.Configuration? = RankingProbe.Configuration()
        /// The CONNECT ports whose targets ``probe`` probes with TLS handshakes. Default: 443 only.
        public var probedPorts: Set<UInt16> = [443]
        /// How long the origin may take to send its response head once the request head is sent; then
        /// the client gets 504. Default: 30 seconds.
        public var originTimeout: Duration = .seconds(30)
        /// How long a client may take to send a whole request head: from the connection's opening for
        /// its first request, from the first byte of the head for later ones. A head begun but not
        /// finished in time is answered 408 (a slowloris client holds a connection at most this long).
        /// Default: 20 seconds.
        public var requestHeadTimeout: Duration = .seconds(20)
        /// The longest wait for one read or write while a body is relayed, and for the first byte of the
        /// next request on an idle keep-alive connection. Default: 60 seconds.
        public var idleTimeout: Duration = .seconds(60)
        /// How long an origin connection kept open after a response (for the same client connection's
        /// next request to the same pinned address and `Host`) may wait unused before it is closed.
        /// Default: 30 seconds.
        public var originKeepAlive: Duration = .seconds(30)
        /// How long a CONNECT tunnel may carry no bytes in either direction before it is closed.
        /// Default: 10 minutes.
        public var tunnelIdleTimeout: Duration = .seconds(600)
        /// The most client connections served at once. A connection accepted beyond it is answered
        /// `503 Service Unavailable` (with `Retry-After: 1` and `Connection: close`) and closed; those
        /// already open are served as usual. Each connection holds one descriptor, and one more for its
        /// origin: the process's limit on open files (`ulimit -n`) should be about twice this. Default:
        /// 1024.
        public var maximumConnections = 1024
        /// Size limits on request and response heads.
        public var headLimits = HeadLimits()
        /// The pseudonym in the `Via` field added to every forwarded message (RFC 9110 §7.6.3).
        /// Default: `hostpin`.
        public var viaPseudonym = "hostpin"
        /// Called once per request (and once per tunnel, when it closes) from the connection's task.
        /// Default: `nil`, no log.
        public var accessLog: (@Sendable (AccessLogEntry) -> Void)?
        /// Where requests, connections and relayed bytes are counted (README.md, "Metrics"). Default:
        /// `nil`, nothing counted.
        public var metrics: ProxyMetrics?
        /// Called with a one-line message (no final newline) when the proxy meets a problem that no
        /// request's log entry shows: running out of file descriptors (once per episode). Default: the
        /// line is written to standard error.
        public var diagnosticLog: (@Sendable (String) -> Void)? = { line in
            let bytes = Array((line + "\n").utf8)
            _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
        }

        /// The defaults above.
        public init() {}
    }
}
