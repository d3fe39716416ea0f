import HostPin
import HostPinNet
import Synchronization

/// An HTTP/1.1 forward proxy whose every connection goes to the addresses a trusted ``HostResolver``
/// pins: absolute-form requests (`GET http://host/path`) are forwarded in origin-form with the right
/// `Host`; `CONNECT host:port` opens a byte tunnel, so TLS stays end to end.
///
/// ```swift
/// var configuration = ForwardProxy.Configuration()
/// configuration.listenAddress = SocketAddress("127.0.0.1:0")!
/// let proxy = ForwardProxy(configuration: configuration, resolver: CachingResolver(upstream: trusted))
/// let address = try proxy.start()      // the port the kernel chose
/// …
/// await proxy.stop()
/// ```
///
/// Sockets are non-blocking and driven by one epoll thread (HostPinNet's `EventLoop`, whose
/// edge-triggered waits cannot lose a wakeup); each client connection is one task. Requests are parsed
/// by ``RequestHeadParser``, a strict RFC 9112 parser of HostPin's own (Debian 12 packages no maintained
/// HTTP/1.1 parser). Failures reach the client as ``ProxyError`` responses (400, 403, 502, 504, …) with a
/// one-line text body.
public final class ForwardProxy: Sendable {
    /// The settings, fixed at creation.
    public let configuration: Configuration
    /// The resolver every target name goes through.
    public let resolver: any HostResolver

    private struct Running {
        var listener: Listener
        var connections: [UInt64: (channel: SocketChannel, task: Task<Void, Never>)] = [:]
        var nextID: UInt64 = 0
    }

    /// Guards the listener and the open client connections with their tasks (added by the accept
    /// handler, removed by each connection's task when it ends, all shut down by ``stop()``).
    private let state = Mutex<Running?>(nil)
    /// Closes origin connections kept idle between a client connection's requests for too long.
    private let keeper: OriginKeeper

    /// A stopped proxy; nothing listens until ``start()``.
    public init(configuration: Configuration, resolver: any HostResolver) {
        self.configuration = configuration
        self.resolver = resolver
        keeper = OriginKeeper(timeout: configuration.originKeepAlive)
    }

    /// Where the proxy listens, with the real port when ``Configuration/listenAddress`` had port 0;
    /// `nil` while stopped.
    public var boundAddress: SocketAddress? {
        state.withLock { $0?.listener.boundAddress }
    }

    /// Binds the listening socket and starts accepting connections; returns at once.
    ///
    /// - Returns: The bound address (see ``boundAddress``).
    /// - Throws: ``ListenError``: a non-loopback address without ``Configuration/allowRemote``, an
    ///   address in use, or a proxy already running.
    @discardableResult
    public func start() throws(ListenError) -> SocketAddress {
        let address = configuration.listenAddress
        let isLoopback = address.address.specialPurposeBlock?.name == "loopback"
        guard isLoopback || configuration.allowRemote else { throw .remoteNotAllowed(address) }
        if state.withLock({ $0 != nil }) { throw .alreadyStarted }
        let diagnostics = configuration.diagnosticLog
        let listener = try Listener(address: address) { error in
            diagnostics?("hostpin proxy: out of file descriptors (\(error)): closing new connections until descriptors are free")
        } onAccept: { [weak self] channel in
            self?.accept(channel)
        }
        let started = state.withLock { running -> Bool in
            guard running == nil else { return false }
            running = Running(listener: listener)
            return true
        }
        guard started else {
            listener.shutdown()
            throw .alreadyStarted
        }
        keeper.start()
        return listener.boundAddress
    }

    /// Stops accepting, shuts every open connection and tunnel down, and waits for their tasks to end.
    /// Idempotent.
    public func stop() async {
        guard let running = state.withLock({ running -> Running? in
            defer { running = nil }
            return running
        }) else { return }
        await running.listener.close()
        for (channel, _) in running.connections.values { channel.shutdown() }
        for (_, task) in running.connections.values {
            task.cancel()
            await task.value
        }
        keeper.stop()
    }

    private func accept(_ channel: SocketChannel) {
        let bound = boundAddress
        let connector = OriginConnector(resolver: resolver, allowPrivate: configuration.allowPrivate,
                                        connectTimeout: configuration.connectTimeout,
                                        proxy: bound.map { ListeningEndpoint(bound: $0) })
        let connection = ProxyConnection(client: channel, configuration: configuration, connector: connector,
                                         parser: RequestHeadParser(limits: configuration.headLimits), keeper: keeper)
        state.withLock { running in
            guard running != nil else {
                channel.close()
                return
            }
            let id = running!.nextID
            running!.nextID += 1
            let task = Task { [weak self] in
                await connection.run()
                self?.finished(id)
            }
            running!.connections[id] = (channel, task)
        }
    }

    private func finished(_ id: UInt64) {
        state.withLock { running in
            _ = running?.connections.removeValue(forKey: id)
        }
    }
}
