import HostPin
import HostPinNet
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// HostPin's DNS stub: answers A and AAAA queries over UDP and TCP from the trusted cache, and forwards
/// other types to the trusted upstreams, for every program on the host that asks the system's resolver.
///
/// ```swift
/// var configuration = DNSServer.Configuration()
/// configuration.listenAddresses = [SocketAddress("127.0.0.1:0")!]
/// let server = DNSServer(configuration: configuration,
///                        responder: DNSResponder(resolver: CachingResolver(upstream: trusted), forwarder: trusted))
/// let addresses = try server.start()      // the port the kernel chose, UDP and TCP
/// …
/// await server.stop()
/// ```
///
/// What is answered how is the ``DNSResponder``'s business; the server adds the sockets: each listening
/// address gets a UDP socket and a TCP listener on the same port, all driven by HostPinNet's
/// `EventLoop` (no thread per client). UDP queries are answered concurrently; TCP connections are
/// pipelined and closed when idle (``Configuration/tcpIdleTimeout``). Loopback only unless
/// ``Configuration/allowRemote``, which also rate-limits UDP clients (``Configuration/remoteRateLimit``).
public final class DNSServer: Sendable {
    /// The settings, fixed at creation.
    public let configuration: Configuration
    /// What answers each query.
    public let responder: DNSResponder

    private struct Running {
        var udp: [(service: UDPService, task: Task<Void, Never>)] = []
        var listeners: [Listener] = []
        var connections: [UInt64: (channel: SocketChannel, task: Task<Void, Never>)] = [:]
        var nextID: UInt64 = 0
    }

    /// Guards the sockets and the open TCP connections with their tasks (added by the accept handler,
    /// removed by each connection's task when it ends, all shut down by ``stop()``).
    private let state = Mutex<Running?>(nil)

    /// A stopped server; nothing listens until ``start()``.
    public init(configuration: Configuration, responder: DNSResponder) {
        self.configuration = configuration
        self.responder = responder
    }

    /// Where the server listens (UDP and TCP on each), with the real ports; empty while stopped.
    public var boundAddresses: [SocketAddress] {
        state.withLock { $0?.udp.map(\.service.socket.boundAddress) ?? [] }
    }

    /// Binds a UDP socket and a TCP listener on each of ``Configuration/listenAddresses`` and starts
    /// answering; returns at once.
    ///
    /// - Returns: The bound addresses, in configuration order: a port 0 is replaced by the one the kernel
    ///   chose, the same for UDP and TCP.
    /// - Throws: ``DNSServerError``: a non-loopback address without ``Configuration/allowRemote``, a
    ///   socket that cannot be bound (nothing is left open then), or a server already running.
    @discardableResult
    public func start() throws(DNSServerError) -> [SocketAddress] {
        guard !configuration.listenAddresses.isEmpty else { throw .noListenAddress }
        if !configuration.allowRemote, let remote = configuration.listenAddresses.first(where: { !Self.isLoopback($0.address) }) {
            throw .remoteNotAllowed(remote)
        }
        if state.withLock({ $0 != nil }) { throw .alreadyStarted }
        var sockets: [(BlockingDatagramSocket, Listener)] = []
        do throws(DNSServerError) {
            for address in configuration.listenAddresses { sockets.append(try bind(address)) }
        } catch {
            for (socket, listener) in sockets {
                socket.close()
                listener.shutdown()
            }
            throw error
        }
        let inFlight = QueryCount(maximum: configuration.maximumUDPQueries)
        let limiter = configuration.allowRemote ? RateLimiter(limit: configuration.remoteRateLimit) : nil
        let services = sockets.map { UDPService(socket: $0.0, responder: responder, inFlight: inFlight, limiter: limiter) }
        let started = state.withLock { running -> Bool in
            guard running == nil else { return false }
            running = Running(udp: services.map { service in (service, Task { await service.run() }) },
                              listeners: sockets.map(\.1))
            return true
        }
        guard started else {
            for (socket, listener) in sockets {
                socket.close()
                listener.shutdown()
            }
            throw .alreadyStarted
        }
        return sockets.map(\.0.boundAddress)
    }

    /// Stops listening, shuts every TCP connection down, cancels the answers in flight (those get no
    /// response) and waits for every task to end. Idempotent.
    public func stop() async {
        guard let running = state.withLock({ running -> Running? in
            defer { running = nil }
            return running
        }) else { return }
        for (service, task) in running.udp {
            service.socket.shutdown()
            task.cancel()
        }
        for listener in running.listeners { await listener.close() }
        for (channel, _) in running.connections.values { channel.shutdown() }
        for (_, task) in running.connections.values {
            task.cancel()
            await task.value
        }
        for (_, task) in running.udp { await task.value }
        // Closed here, not when the last reference goes: the port is free once stop() returns.
        for (service, _) in running.udp { service.socket.close() }
    }

    /// A UDP socket and a TCP listener on one port of `address`. For port 0 the UDP socket picks the
    /// port; when TCP finds it taken, both are tried again on another.
    private func bind(_ address: SocketAddress) throws(DNSServerError) -> (BlockingDatagramSocket, Listener) {
        var attempt = 0
        while true {
            attempt += 1
            let socket: BlockingDatagramSocket
            do throws(SocketError) {
                socket = try BlockingDatagramSocket(binding: address, receiveBuffer: Self.udpReceiveBuffer)
            } catch {
                throw .bind(address, .udp, error)
            }
            let tcpAddress = socket.boundAddress
            let log = configuration.diagnosticLog
            do throws(ListenError) {
                let listener = try Listener(address: tcpAddress) { error in
                    log?("hostpin serve: out of file descriptors (\(error)): closing new TCP connections until descriptors are free")
                } onAccept: { [weak self] channel in
                    self?.accept(channel)
                }
                return (socket, listener)
            } catch {
                socket.close()
                let failure: SocketError = switch error {
                case .socket(_, let failure): failure
                case .remoteNotAllowed, .alreadyStarted: .closed  // only ForwardProxy throws these
                }
                if address.port == 0, attempt < 8, case .system(_, EADDRINUSE) = failure { continue }
                throw .bind(tcpAddress, .tcp, failure)
            }
        }
    }

    private func accept(_ channel: SocketChannel) {
        let connection = TCPConnection(channel: channel, responder: responder, idleTimeout: configuration.tcpIdleTimeout,
                                       maximumInFlight: configuration.maximumQueriesPerConnection)
        let limit = configuration.maximumTCPConnections
        state.withLock { running in
            guard running != nil, running!.connections.count < limit else {
                channel.close()
                return
            }
            let id = running!.nextID
            running!.nextID += 1
            // Started under the lock, so the task's `finished` (which takes it) comes after the insertion.
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

    /// The receive buffer asked for each UDP socket, in bytes: a burst of a few thousand queries (every
    /// program of a host starting at once, each asking A and AAAA) waits in it instead of being dropped.
    static let udpReceiveBuffer = 1 << 20

    /// Whether `address` is a loopback address: 127.0.0.0/8 or ::1 (RFC 6890).
    static func isLoopback(_ address: IPAddress) -> Bool {
        address.family == .v4 ? address.bytes[0] == 127 : address == .loopbackV6
    }
}
