import HostPin
import HostPinNet
import Synchronization

/// An HTTP/1.1 forward proxy whose every connection goes to the addresses a trusted ``HostResolver``
/// pins: absolute-form requests (`GET http://host/path`) are forwarded in origin-form with the right
/// `Host`; `CONNECT host:port` opens a byte tunnel, so TLS stays end to end. The interception rules
/// (``Configuration/rules``) decide each request first: block, answer locally, redirect, pin, edit.
///
/// ```swift
/// var configuration = ForwardProxy.Configuration()
/// configuration.listenAddress = SocketAddress("127.0.0.1:0")!
/// let proxy = ForwardProxy(configuration: configuration, resolver: CachingResolver(upstream: trusted))
/// let address = try proxy.start()      // the port the kernel chose
/// …
/// await proxy.stop(grace: .seconds(10))
/// ```
///
/// Sockets are non-blocking and driven by one epoll thread (HostPinNet's `EventLoop`, whose
/// edge-triggered waits cannot lose a wakeup); each client connection is one task, which runs on that
/// same thread (the loop is its executor), so a socket becoming ready continues the waiting task
/// without a thread hop. Requests are parsed
/// by ``RequestHeadParser``, a strict RFC 9112 parser of HostPin's own (Debian 12 packages no maintained
/// HTTP/1.1 parser). Failures reach the client as ``ProxyError`` responses (400, 403, 502, 504, …) with a
/// one-line text body.
public final class ForwardProxy: Sendable {
    /// The settings, fixed at creation.
    public let configuration: Configuration
    /// The resolver every target name goes through.
    public let resolver: any HostResolver
    /// The rules in force, at first ``Configuration/rules``, replaceable while the proxy runs (a reload):
    /// each request reads them once, when its head has arrived.
    public let liveRules: LiveRules
    /// The background probes of CONNECT and plain-HTTP targets (``Configuration/probe``) feeding
    /// ``Configuration/ranking``; `nil` when either is off.
    public let rankingProbe: RankingProbe?

    private struct Running {
        var listener: Listener
        var connections: ConnectionRegistry
    }

    private enum Phase {
        case stopped
        case running(Running)
        /// ``stop(grace:)`` is under way: nothing is accepted, connections finish or are cut.
        case stopping(ConnectionRegistry)
    }

    /// Guards the phase: while running, the listener and the registry of client connections.
    private let state = Mutex(Phase.stopped)
    /// Closes origin connections kept idle between a client connection's requests for too long.
    private let keeper: OriginKeeper

    /// A stopped proxy; nothing listens until ``start()``.
    public init(configuration: Configuration, resolver: any HostResolver) {
        self.configuration = configuration
        self.resolver = resolver
        liveRules = LiveRules(configuration.rules)
        rankingProbe = configuration.ranking.flatMap { ranking in
            configuration.probe.map { RankingProbe(ranking: ranking, configuration: $0) }
        }
        keeper = OriginKeeper(timeout: configuration.originKeepAlive)
    }

    /// Where the proxy listens, with the real port when ``Configuration/listenAddress`` had port 0;
    /// `nil` while stopped or stopping.
    public var boundAddress: SocketAddress? {
        state.withLock { phase in
            guard case .running(let running) = phase else { return nil }
            return running.listener.boundAddress
        }
    }

    /// Binds the listening socket and starts accepting connections; returns at once.
    ///
    /// - Returns: The bound address (see ``boundAddress``).
    /// - Throws: ``ListenError``: a non-loopback address without ``Configuration/allowRemote``, an
    ///   address in use, or a proxy already running (or still stopping).
    @discardableResult
    public func start() throws(ListenError) -> SocketAddress {
        let address = configuration.listenAddress
        let isLoopback = address.address.specialPurposeBlock?.name == "loopback"
        guard isLoopback || configuration.allowRemote else { throw .remoteNotAllowed(address) }
        if state.withLock({ if case .stopped = $0 { false } else { true } }) { throw .alreadyStarted }
        let diagnostics = configuration.diagnosticLog
        let listener = try Listener(address: address) { error in
            diagnostics?("hostpin proxy: out of file descriptors (\(error)): closing new connections until descriptors are free")
        } onAccept: { [weak self] channel in
            self?.accept(channel)
        }
        let started = state.withLock { phase -> Bool in
            guard case .stopped = phase else { return false }
            phase = .running(Running(listener: listener, connections: ConnectionRegistry(maximum: configuration.maximumConnections)))
            return true
        }
        guard started else {
            listener.shutdown()
            throw .alreadyStarted
        }
        keeper.start()
        return listener.boundAddress
    }

    /// Closes the origin connections kept between a client's requests (a network change, issue 30: they
    /// were made on the old path): idle ones at once, busy ones when their response is done. CONNECT
    /// tunnels are the client's end to end and stay.
    ///
    /// - Returns: How many were closed at once.
    @discardableResult
    public func closeKeptOrigins() -> Int {
        keeper.retireAll()
    }

    /// Stops the proxy gracefully: stops accepting at once, closes idle connections (kept alive between
    /// requests, or silent since they opened) at once, lets requests and tunnels in flight run for up to
    /// `grace`, then shuts down what is left; returns when every connection is closed. Responses sent
    /// meanwhile say `Connection: close`. The proxy can be started again once this returns.
    ///
    /// A call while a stop is under way shortens its grace period to this call's (a second Ctrl-C cuts
    /// at once with `.zero`) and returns when the connections are closed; a call while stopped returns
    /// at once.
    ///
    /// - Parameter grace: How long transfers in flight may continue. Default: zero (cut them at once).
    public func stop(grace: Duration = .zero) async {
        enum Step {
            case stop(Running)
            case shorten(ConnectionRegistry)
            case none
        }
        let step = state.withLock { phase -> Step in
            switch phase {
            case .running(let running):
                phase = .stopping(running.connections)
                return .stop(running)
            case .stopping(let connections): return .shorten(connections)
            case .stopped: return .none
            }
        }
        switch step {
        case .stop(let running):
            running.connections.beginStopping()
            await running.listener.close()
            await Self.drain(running.connections, grace: grace)
            keeper.stop()
            state.withLock { $0 = .stopped }
        case .shorten(let connections):
            await Self.drain(connections, grace: grace)
        case .none:
            break
        }
    }

    /// Waits until every connection has ended or `grace` has passed, then cuts what is left and waits
    /// for it to end.
    private static func drain(_ connections: ConnectionRegistry, grace: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await connections.waitUntilEmpty() }
            group.addTask { await EventLoop.shared.sleep(until: .after(grace)) }
            await group.next()
            group.cancelAll()  // ends the sleep when the connections finished first
            connections.cutAll()  // ends the wait when the grace period ended first
        }
    }

    private func accept(_ channel: SocketChannel) {
        guard let running = state.withLock({ phase -> Running? in
            guard case .running(let running) = phase else { return nil }
            return running
        }) else {
            channel.close()
            return
        }
        switch running.connections.admit(channel) {
        case .stopping:
            channel.close()
        case .full(let firstOfEpisode):
            if firstOfEpisode {
                configuration.diagnosticLog?("hostpin proxy: \(configuration.maximumConnections) connections open (the maximum): "
                                             + "answering new ones 503 until one closes")
            }
            Overload.refuse(channel, configuration: configuration)
        case .admitted(let slot):
            let connector = OriginConnector(resolver: resolver, allowPrivate: configuration.allowPrivate,
                                            connectTimeout: configuration.connectTimeout,
                                            proxy: ListeningEndpoint(bound: running.listener.boundAddress),
                                            happyEyeballs: configuration.happyEyeballs, ranking: configuration.ranking,
                                            probe: rankingProbe)
            let connection = ProxyConnection(client: channel, configuration: configuration, rules: liveRules, connector: connector,
                                             parser: RequestHeadParser(limits: configuration.headLimits), keeper: keeper,
                                             slot: slot)
            configuration.metrics?.connectionOpened()
            connection.start(.opening)
        }
    }
}
