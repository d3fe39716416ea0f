import Foundation
import HostPin
import HostPinProxy

/// `--metrics-listen IP:PORT` of the long-running commands (`serve`, `proxy`): the Prometheus metrics
/// and health endpoint (``MetricsEndpoint``), off unless given, loopback only unless the command's
/// `--allow-remote`.
public struct MetricsOptions: Sendable {
    /// Where the endpoint listens; `nil` when it is off.
    public var listenAddress: SocketAddress?
    /// The command's `--allow-remote`.
    public var allowRemote: Bool

    /// The endpoint at `listenAddress` (off when `nil`), loopback only unless `allowRemote`.
    public init(listenAddress: SocketAddress? = nil, allowRemote: Bool = false) {
        self.listenAddress = listenAddress
        self.allowRemote = allowRemote
    }

    /// Takes `--metrics-listen` from `parser`.
    ///
    /// - Throws: ``UsageError/invalidValue(option:reason:)`` for an address that is not `IP:PORT`, or
    ///   not loopback without `allowRemote`.
    package init(parsing parser: inout OptionParser, allowRemote: Bool) throws(UsageError) {
        listenAddress = try parser.value("--metrics-listen", as: SocketAddress.self, expected: "IP:PORT (IPv6 as [IP]:PORT)")
        self.allowRemote = allowRemote
        if let listenAddress, !allowRemote, listenAddress.address.specialPurposeBlock?.name != "loopback" {
            throw .invalidValue(option: "--metrics-listen", reason: "\(listenAddress) is not a loopback address; "
                                + "add --allow-remote to let other hosts read the metrics")
        }
    }

    /// The counters the stub, the proxy and the upstream switch fill, made only when the endpoint or the
    /// control socket is on (they are what it and `hostpin ctl status` read; else nothing is counted): the
    /// stub's when the command runs one, the proxy's when it runs one, the DNSSEC statuses always (zero
    /// while validation is off; a reload may turn it on).
    package func counters(dns: Bool, proxy: Bool, controlSocket: Bool = false)
        -> (dns: DNSQueryMetrics?, proxy: ProxyMetrics?, dnssec: DNSSECMetrics?)
    {
        guard listenAddress != nil || controlSocket else { return (nil, nil, nil) }
        return (dns ? DNSQueryMetrics() : nil, proxy ? ProxyMetrics() : nil, DNSSECMetrics())
    }

    /// Starts the endpoint serving `metrics` and says where it listens on standard error.
    ///
    /// - Returns: The running endpoint and where it listens; `nil` when `--metrics-listen` was not given.
    /// - Throws: ``ListenError`` when it cannot listen.
    package func start(_ metrics: @autoclosure () -> ServiceMetrics, log: ServiceLog) throws(ListenError)
        -> (endpoint: MetricsEndpoint, address: SocketAddress)?
    {
        guard let listenAddress else { return nil }
        var configuration = MetricsEndpoint.Configuration(listenAddress: listenAddress)
        configuration.allowRemote = allowRemote
        let endpoint = MetricsEndpoint(configuration: configuration, metrics: metrics())
        let address = try endpoint.start()
        log.log(.info, "listening on \(address) (metrics)")
        return (endpoint, address)
    }

    /// The help lines, the option column `width` wide (the option on a line of its own when it is wider).
    package static func helpLines(width: Int) -> String {
        let name = "--metrics-listen IP:PORT"
        let indent = String(repeating: " ", count: width + 2)
        let first = name.count < width ? "  " + name.padding(toLength: width, withPad: " ", startingAt: 0)
            : "  " + name + "\n" + indent
        return first + "Serve Prometheus metrics at http://IP:PORT/metrics and a health check\n"
            + indent + "at /healthz (200 ok, or 503 and why: no trusted upstream is healthy, or\n"
            + indent + "stopping); off unless given, loopback only unless --allow-remote; port 0\n"
            + indent + "picks one. The status page for a browser is at / (its JSON at\n"
            + indent + "/status.json). README.md, \"Metrics\", lists every metric."
    }
}
