import HostPin
import HostPinNet
import Synchronization

/// The HTTP endpoint monitoring scrapes: `GET /metrics` answers a ``HostPin/ServiceMetrics``'
/// exposition (Prometheus text format 0.0.4), `GET /healthz` answers `200 ok` while the service runs and
/// a trusted upstream is healthy, else `503` with the reason (``HostPin/ServiceHealth``); any other path
/// is 404, any other method 405 (README.md, "Metrics").
///
/// ```swift
/// let endpoint = MetricsEndpoint(configuration: .init(listenAddress: SocketAddress("127.0.0.1:0")!), metrics: metrics)
/// let address = try endpoint.start()
/// …
/// await endpoint.stop()
/// ```
///
/// It lives beside the proxy because it speaks HTTP/1.1 through the proxy's own pieces: the strict
/// request-head parser (``RequestHeadParser``), the buffered reads that check a head's limits as its bytes
/// arrive, the lingering close after an error, and the connection registry. Its sockets are driven by
/// HostPinNet's `EventLoop` like every other listener's: one task per connection, nothing blocks a
/// thread, a slow or hostile client costs one connection slot until its head timeout.
public final class MetricsEndpoint: Sendable {
    /// The settings, fixed at creation.
    public let configuration: Configuration
    /// What `/metrics` and `/healthz` read.
    public let metrics: ServiceMetrics

    private struct Running {
        var listener: Listener
        var connections: ConnectionRegistry
    }

    /// Guards the listener and the registry of connections while running.
    private let state = Mutex<Running?>(nil)

    /// A stopped endpoint; nothing listens until ``start()``.
    public init(configuration: Configuration, metrics: ServiceMetrics) {
        self.configuration = configuration
        self.metrics = metrics
    }

    /// Binds the listening socket and starts answering; returns at once.
    ///
    /// - Returns: The bound address (with the kernel's port for port 0).
    /// - Throws: ``ListenError``: a non-loopback address without ``Configuration/allowRemote``, an
    ///   address in use, or an endpoint already running.
    @discardableResult
    public func start() throws(ListenError) -> SocketAddress {
        let address = configuration.listenAddress
        guard address.address.specialPurposeBlock?.name == "loopback" || configuration.allowRemote else {
            throw .remoteNotAllowed(address)
        }
        if state.withLock({ $0 != nil }) { throw .alreadyStarted }
        let listener = try Listener(address: address) { _ in
            // Out of descriptors: the listener closes new connections; the service's own listeners report it.
        } onAccept: { [weak self] channel in
            self?.accept(channel)
        }
        let started = state.withLock { running -> Bool in
            guard running == nil else { return false }
            running = Running(listener: listener, connections: ConnectionRegistry(maximum: configuration.maximumConnections))
            return true
        }
        guard started else {
            listener.shutdown()
            throw .alreadyStarted
        }
        return listener.boundAddress
    }

    /// Stops listening, cuts every connection at once (a scrape is retried at the next interval) and
    /// returns when they are closed. Idempotent; the endpoint can be started again afterwards.
    public func stop() async {
        guard let running = state.withLock({ running -> Running? in
            defer { running = nil }
            return running
        }) else { return }
        await running.listener.close()
        running.connections.cutAll()
        await running.connections.waitUntilEmpty()
    }

    private func accept(_ channel: SocketChannel) {
        guard let connections = state.withLock({ $0?.connections }) else {
            channel.close()
            return
        }
        switch connections.admit(channel) {
        case .stopping:
            channel.close()
        case .full:
            var response = MetricsResponse.error(503, "Too many connections to the metrics endpoint "
                                                 + "(at most \(configuration.maximumConnections)); try again.")
            response.retryAfter = true
            Task {
                try? await channel.write(response.wireBytes, deadline: .after(LingeringClose.linger))
                await LingeringClose.drain(channel)
                channel.close()
            }
        case .admitted(let slot):
            let connection = MetricsConnection(client: channel, configuration: configuration, metrics: metrics, slot: slot)
            let task = Task {
                await connection.run()
                slot.registry.remove(slot.id)
            }
            slot.registry.attach(task, to: slot.id)
        }
    }
}
