import Foundation
import HostPin
import HostPinProxy

/// The forward proxy's options (`--allow-private`, `--allow-connect-port`, `--max-connections`,
/// `--grace`) and its run (access log on standard output, graceful stop), one implementation for
/// `hostpin proxy` and `hostpin serve --listen`, so both run the same proxy.
public struct ProxyOptions: Sendable {
    /// Where `hostpin proxy` listens without `--listen`.
    package static let defaultListen = "127.0.0.1:8118"
    package static let defaultTimeoutSeconds = 30.0
    package static let defaultMaximumConnections = 1024
    package static let defaultGraceSeconds = 10.0
    /// The names of the options that only the proxy uses (`serve` without `--listen` refuses them).
    package static let proxyOnlyOptions = ["--allow-connect-port", "--max-connections", "--grace", "--no-address-ranking"]

    /// The proxy's configuration, without the access log (attached by ``start(resolver:)``).
    public var configuration: ForwardProxy.Configuration
    /// How long transfers in flight may run after SIGINT or SIGTERM.
    public var grace: Duration
    /// The proxy-only options given (``proxyOnlyOptions``), in that order.
    package var given: [String] = []

    /// The proxy at `listenAddress` (loopback only unless `allowRemote`) with the defaults of
    /// `hostpin proxy`: 30 s for an origin, 1024 connections, 10 s of grace, CONNECT to 443 only, no
    /// private targets. The rules are the service's (``ServiceConfiguration/rules``).
    public init(listenAddress: SocketAddress, allowRemote: Bool = false) {
        var configuration = ForwardProxy.Configuration()
        configuration.listenAddress = listenAddress
        configuration.allowRemote = allowRemote
        let timeout = Duration.milliseconds(Int64(Self.defaultTimeoutSeconds * 1000))
        configuration.connectTimeout = timeout
        configuration.originTimeout = timeout
        configuration.maximumConnections = Self.defaultMaximumConnections
        self.configuration = configuration
        grace = .milliseconds(Int64(Self.defaultGraceSeconds * 1000))
    }

    /// Takes `--allow-private`, `--allow-connect-port` (repeatable), `--max-connections`, `--grace` and
    /// `--no-address-ranking` (no ``ForwardProxy/Configuration/ranking``, no probe: answer order) from `parser`.
    ///
    /// - Parameters:
    ///   - listenAddress: Where the proxy listens.
    ///   - allowRemote: Whether `listenAddress` may be other than loopback.
    ///   - rules: The `--rules` to apply to every request.
    ///   - timeout: How long an origin may take to accept a connection and begin its response.
    /// - Throws: ``UsageError/invalidValue(option:reason:)`` for a bad value, or a non-loopback
    ///   `listenAddress` without `allowRemote`.
    package init(parsing parser: inout OptionParser, listenAddress: SocketAddress, allowRemote: Bool, rules: Rules,
         timeout: Duration) throws(UsageError)
    {
        var configuration = ForwardProxy.Configuration()
        configuration.listenAddress = listenAddress
        configuration.allowRemote = allowRemote
        configuration.rules = rules
        configuration.connectTimeout = timeout
        configuration.originTimeout = timeout
        configuration.allowPrivate = try parser.flag("--allow-private")
        let ports = try parser.values("--allow-connect-port") { text throws(UsageError) -> UInt16 in
            guard let port = UInt16(port: text) else {
                throw .invalidValue(option: "--allow-connect-port", reason: "'\(text)' is not a port from 1 to 65535")
            }
            return port
        }
        configuration.allowedConnectPorts.formUnion(ports)
        let maximumConnections = try parser.values("--max-connections") { text throws(UsageError) -> Int in
            guard text.allSatisfy(\.isNumber), let count = Int(text), (1...1_000_000).contains(count) else {
                throw .invalidValue(option: "--max-connections", reason: "'\(text)' is not a number from 1 to 1000000")
            }
            return count
        }.last
        configuration.maximumConnections = maximumConnections ?? Self.defaultMaximumConnections
        let grace = try parser.values("--grace") { text throws(UsageError) -> Duration in
            guard let seconds = Double(text), seconds.isFinite, seconds >= 0, seconds <= 3600 else {
                throw .invalidValue(option: "--grace", reason: "'\(text)' is not a number of seconds from 0 to 3600")
            }
            return .milliseconds(Int64((seconds * 1000).rounded()))
        }.last
        // Answer order, as a client with no history connects (a comparison, a suspected ranking fault).
        let answerOrder = try parser.flag("--no-address-ranking")
        if answerOrder {
            configuration.ranking = nil
            configuration.probe = nil
        }
        if !allowRemote, listenAddress.address.specialPurposeBlock?.name != "loopback" {
            throw .invalidValue(option: "--listen", reason: "\(listenAddress) is not a loopback address; "
                                + "add --allow-remote to let other hosts use the proxy")
        }
        self.configuration = configuration
        self.grace = grace ?? .milliseconds(Int64(Self.defaultGraceSeconds * 1000))
        given = zip(Self.proxyOnlyOptions, [!ports.isEmpty, maximumConnections != nil, grace != nil, answerOrder]).filter(\.1).map(\.0)
    }

    /// Starts the proxy on `resolver`, its access log written to descriptor `accessLog` (standard output
    /// by default), counting in `metrics`.
    ///
    /// - Throws: ``ListenError`` when it cannot listen.
    package func start(resolver: any HostResolver, metrics: ProxyMetrics? = nil,
               accessLog descriptor: Int32 = STDOUT_FILENO) throws(ListenError) -> RunningProxy {
        var configuration = configuration
        configuration.metrics = metrics
        // Written by a thread of its own: a slow reader of standard output must not block a connection.
        let accessLog = AccessLogWriter(descriptor: descriptor)
        configuration.accessLog = { entry in accessLog.append(entry) }
        let proxy = ForwardProxy(configuration: configuration, resolver: resolver)
        let address = try proxy.start()
        return RunningProxy(proxy: proxy, accessLog: accessLog, grace: grace, address: address)
    }
}

/// A proxy started by ``ProxyOptions/start(resolver:)``.
package struct RunningProxy: Sendable {
    package let proxy: ForwardProxy
    package let accessLog: AccessLogWriter
    package let grace: Duration
    /// Where it listens.
    package let address: SocketAddress

    /// Stops the proxy: requests and tunnels in flight get `grace` (the configuration's when `nil`), which
    /// ``Service/cutTransfers()`` cuts short; then the access log is flushed (for at most 2 s).
    package func stop(grace: Duration? = nil, log: ServiceLog) async {
        let grace = grace ?? self.grace
        log.log(.info, "stopping: waiting up to \(Self.seconds(grace)) for requests and tunnels in flight "
                      + "(signal again to cut them at once)")
        await proxy.stop(grace: grace)
        _ = await accessLog.finish(within: .seconds(2))
    }

    /// `10 s`, `0.5 s`.
    package static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(Double(milliseconds) / 1000) s"
    }
}
