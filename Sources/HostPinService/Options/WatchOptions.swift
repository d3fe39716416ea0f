import HostPin
import HostPinNet

/// `hostpin serve`'s watch of the local resolver: `--watch-local [IP:PORT]`, `--watch-interval SECONDS`,
/// `--watch-name-interval SECONDS` and the detector's `--hijack-list`, `--ordinary`, `--no-probe`.
///
/// Without IP:PORT the watched resolver is the system's: the first `nameserver` of /etc/resolv.conf as
/// c-ares reads it (read, never written). One server, because a comparison is one question to one
/// resolver, and the first is the one glibc asks first. When that is the stub itself (the usual setup
/// once the stub is in /etc/resolv.conf), the watch would compare HostPin with HostPin: a usage error
/// says to name the network's resolver instead.
public struct WatchOptions: Sendable {
    /// The resolver watched.
    public var server: Upstream
    /// Whether ``server`` came from /etc/resolv.conf.
    public var fromSystem: Bool
    public var configuration: LocalResolverWatch.Configuration

    /// A watch of `server` (its answers compared, never used) with `configuration`'s limits.
    public init(server: Upstream, fromSystem: Bool = false, configuration: LocalResolverWatch.Configuration = .init()) {
        self.server = server
        self.fromSystem = fromSystem
        self.configuration = configuration
    }

    /// The options only the watch takes.
    package static let watchOnlyOptions = ["--watch-interval", "--watch-name-interval"] + HijackOptions.detectorOptions

    /// Takes the options from `parser`; `nil` without `--watch-local`.
    ///
    /// - Parameter listening: The stub's own DNS addresses, which the watched resolver must not be.
    /// - Throws: ``UsageError`` for a bad value, a watch option without `--watch-local`, a system
    ///   resolver that cannot be read or is the stub itself.
    package static func parse(_ parser: inout OptionParser, listening: [SocketAddress]) throws(UsageError) -> WatchOptions? {
        let given = parser.optionalValues("--watch-local")
        guard let last = given.last else {
            if let option = watchOnlyOptions.first(where: parser.mentions) {
                throw .conflict("\(option) applies to the watch of the local resolver: add --watch-local [IP:PORT]")
            }
            return nil
        }
        var configuration = LocalResolverWatch.Configuration()
        if let seconds = try parser.values("--watch-interval", { text throws(UsageError) in
            try seconds(text, option: "--watch-interval")
        }).last {
            configuration.overallInterval = seconds
        }
        if let seconds = try parser.values("--watch-name-interval", { text throws(UsageError) in
            try seconds(text, option: "--watch-name-interval")
        }).last {
            configuration.nameInterval = seconds
        }
        let hijack = try HijackOptions(parsing: &parser, httpsProbe: false)
        configuration.detector = hijack.detector
        configuration.probesWildcard = hijack.probesWildcard
        if let text = last {
            let server = try Upstream.commandLineValue(text, option: "--watch-local", plainOnly: true)
            return WatchOptions(server: server, fromSystem: false, configuration: configuration)
        }
        let servers: [Upstream]
        do throws(ResolutionError) {
            servers = try UntrustedResolver.systemNameservers()
        } catch {
            throw .invalidValue(option: "--watch-local", reason: "\(error); name the resolver to watch as IP:PORT")
        }
        guard let server = servers.first else {
            throw .invalidValue(option: "--watch-local", reason: "/etc/resolv.conf names no nameserver; name the resolver to watch as IP:PORT")
        }
        if let own = listening.first(where: { Upstream(address: $0.address, port: $0.port) == server }) {
            throw .invalidValue(option: "--watch-local", reason: "the first nameserver of /etc/resolv.conf, \(server), is this "
                                + "stub (--dns-listen \(own)): watching it would compare HostPin with itself; name the "
                                + "network's resolver as IP:PORT (the one DHCP hands out)")
        }
        return WatchOptions(server: server, fromSystem: true, configuration: configuration)
    }

    /// Seconds, fractions allowed, from 0 (no limit) to one day.
    private static func seconds(_ text: String, option: String) throws(UsageError) -> Duration {
        guard let seconds = Double(text), seconds.isFinite, seconds >= 0, seconds <= 86_400 else {
            throw .invalidValue(option: option, reason: "'\(text)' is not a number of seconds from 0 to 86400")
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// Starts watching: a line on standard error now, and one for each name found hijacked, which is
    /// also recorded in `findings` (the status page's list).
    ///
    /// - Parameter trusted: The trusted resolver, for the wildcard probe.
    /// - Throws: ``ResolutionError/setupFailed(_:)`` when the local resolver's channel cannot be made.
    package func start(trusted: any HostResolver, log: ServiceLog, findings: HijackFindings) throws(ResolutionError)
        -> LocalResolverWatch
    {
        let local = try UntrustedResolver(server: server)
        let server = server
        let watch = LocalResolverWatch(local: local, trusted: trusted, configuration: configuration) { report in
            findings.record(report)
            log.log(.warning, "hostpin serve: the local resolver \(server) hijacks \(report)")
        }
        log.log(.info, "watching the local resolver \(server)\(fromSystem ? " (the first nameserver of /etc/resolv.conf)" : "") "
                      + "for hijacking: \(Self.limit(configuration.overallInterval, "at most one comparison per", "no overall limit")), "
                      + "\(Self.limit(configuration.nameInterval, "one per name per", "no limit per name")); its answers are never used")
        return watch
    }

    /// The line at exit: what the watch counted.
    package static func summary(_ statistics: LocalResolverWatch.Statistics, server: Upstream) -> String {
        "hostpin serve: watch of \(server): \(statistics.compared) compared (\(statistics.consistent) consistent, "
            + "\(statistics.hijacked) hijacked, \(statistics.inconclusive) inconclusive), \(statistics.hijackedNames) "
            + "hijacked name\(statistics.hijackedNames == 1 ? "" : "s"); answers skipped: \(statistics.recentlyCompared) "
            + "name compared recently, \(statistics.rateLimited) rate limit, \(statistics.dropped) queue full, "
            + "\(statistics.notCompared) not from the trusted upstreams"
    }

    /// `at most one comparison per 1 s` (`0.5 s`, `3600 s`), or `none` for a zero interval.
    private static func limit(_ duration: Duration, _ prefix: String, _ none: String) -> String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        guard milliseconds > 0 else { return none }
        return prefix + " " + (milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(Double(milliseconds) / 1000) s")
    }
}
