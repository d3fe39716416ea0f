import HostPin
import HostPinNet

/// A CONNECT tunnel (RFC 9110 §9.3.6): after `200`, bytes are relayed unchanged in both directions until
/// both sides have closed, so TLS runs end to end between the client and the origin and the client
/// verifies the origin's real certificate. A side that finishes sending is half-closed on the other hop
/// (FIN passed on); an error or ``ForwardProxy/Configuration/tunnelIdleTimeout`` ends both.
struct Tunnel: Sendable {
    /// The client connection the CONNECT request came on.
    let connection: ProxyConnection
    let input: BufferedInput

    private var client: SocketChannel { connection.client }
    private var configuration: ForwardProxy.Configuration { connection.configuration }
    private var connector: OriginConnector { connection.connector }

    /// Checks, applies the rules about the host (``RuleRouter``), connects, answers
    /// `200 Connection Established`, relays, and logs one line when done. The allowed ports are those the
    /// client asks for; a rule that moves the tunnel to another port is the operator's own choice.
    func open(_ head: RequestHead, authority: RequestTarget.Authority, started: ContinuousClock.Instant) async {
        let when = AccessLogEntry.now()
        let origin: OriginConnector.Connection
        var rules: [RuleReference] = []
        let source: AddressSource
        do throws(ProxyError) {
            guard head.framing == .none else { throw .connectWithBody }
            guard configuration.allowedConnectPorts.contains(authority.port) else {
                throw .connectPortNotAllowed(port: authority.port, allowed: configuration.allowedConnectPorts.sorted())
            }
            let routed = RuleRouter(rules: connection.rules.current).route(connectTo: authority)
            rules = routed.rules
            switch routed.route {
            case .refuse(let error):
                throw error
            case .open(let target, let addresses):
                let pinning = try await connector.addresses(for: target, addresses)
                source = pinning.source
                if configuration.probedPorts.contains(target.port) { probe(target, pinning.addresses) }
                origin = try await connector.connect(host: target.host, addresses: pinning.addresses)
            }
        } catch {
            await connection.refuse(error, method: head.method, target: head.targetText, rules: rules, started: started)
            return
        }
        defer { origin.channel.close() }
        let established = "HTTP/1.1 200 Connection Established\r\nVia: 1.1 \(configuration.viaPseudonym)\r\n\r\n"
        var total: UInt64 = 0
        do throws(SocketError) {
            try await client.write(Array(established.utf8), deadline: .after(configuration.idleTimeout))
            let early = input.take()  // bytes the client sent right after the CONNECT head
            if !early.isEmpty {
                try await origin.channel.write(early, deadline: .after(configuration.idleTimeout))
                total += UInt64(early.count)
                configuration.metrics?.addRelayed(early.count, .toOrigin)
            }
            let idle = configuration.tunnelIdleTimeout
            async let up = Self.pump(from: client, to: origin.channel, idle: idle,
                                     counter: RelayCounter(configuration.metrics, .toOrigin))
            async let down = Self.pump(from: origin.channel, to: client, idle: idle,
                                       counter: RelayCounter(configuration.metrics, .toClient))
            total += await up + down
        } catch {
            // The client left before the tunnel started.
        }
        connection.log(head.method, head.targetText, origin.address, 200, total, started, when, rules: rules, source: source)
    }

    /// Starts the background TLS probe of `target`'s `addresses` (``RankingProbe``: at most once per
    /// name per interval, returns at once); a likely sinkhole it finds is counted and logged.
    private func probe(_ target: RequestTarget.Authority, _ addresses: [SocketAddress]) {
        let (metrics, log) = (configuration.metrics, configuration.diagnosticLog)
        connector.probe?.probe(target.host, port: target.port, addresses: addresses.map(\.address)) { sinkhole in
            metrics?.countSinkhole()
            log?("hostpin proxy: \(sinkhole)")
        }
    }

    /// Copies bytes from `source` to `sink` until `source` ends (then half-closes `sink`) or fails (then
    /// shuts both down, ending the other direction too). The bytes go through a pipe with `splice(2)`
    /// (``SplicePipe``), never entering the process; where the kernel refuses that, through a buffer.
    ///
    /// - Returns: The bytes copied (each step also counted in `counter` once written).
    private static func pump(from source: SocketChannel, to sink: SocketChannel, idle: Duration,
                             counter: RelayCounter?) async -> UInt64 {
        var total: UInt64 = 0
        do throws(SocketError) {
            if let pipe = SplicePipe(),
               try await pipe.relay(from: source, to: sink, idle: idle, moved: { count in
                   counter?.add(count)
                   total += UInt64(count)
               }) != nil
            {
                sink.shutdownWrite()
                return total
            }
            while true {
                let bytes = try await source.read(deadline: .after(idle))
                if bytes.isEmpty {
                    sink.shutdownWrite()
                    return total
                }
                try await sink.write(bytes, deadline: .after(idle))
                counter?.add(bytes.count)
                total += UInt64(bytes.count)
            }
        } catch {
            source.shutdown()
            sink.shutdown()
            return total
        }
    }
}
