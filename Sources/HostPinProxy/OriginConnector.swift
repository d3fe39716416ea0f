import HostPin
import HostPinNet

/// Turns a request's authority into a TCP connection to one of its pinned addresses: resolves the name
/// through the trusted resolver (or takes a `pin` rule's addresses), refuses special-purpose addresses
/// of a resolved name unless allowed (``RebindingGuard``), and races the remaining addresses as Happy
/// Eyeballs does (RFC 8305: IPv6 first, the next address after 250 ms or at the previous one's failure),
/// so a name whose AAAA address is black-holed still connects over IPv4 within a fraction of a second,
/// and `multi.example.test`, whose first address is dead, still connects.
struct OriginConnector: Sendable {
    let resolver: any HostResolver
    let allowPrivate: Bool
    let connectTimeout: Duration
    /// The proxy's own listening endpoint: a target that reaches it is refused (it would loop).
    let proxy: ListeningEndpoint?
    /// The attempt order and delay for names with several addresses (RFC 8305).
    var happyEyeballs = HappyEyeballs()
    /// Ranks the addresses before ``happyEyeballs`` orders them; `nil`: answer order.
    var ranking: SharedAddressRanking?
    /// Probes in the background what ``ranking`` lacks (CONNECT targets' TLS, plain-HTTP targets' other
    /// addresses); `nil`: no probe.
    var probe: RankingProbe?

    /// A connected origin.
    struct Connection: Sendable {
        let channel: SocketChannel
        let address: SocketAddress
        /// How long the winning attempt took to connect, from its own start (not the race's).
        let connectTime: Duration
    }

    /// The addresses a request may be connected to, and where they came from.
    struct Pinning: Sendable {
        let addresses: [SocketAddress]
        let source: AddressSource
    }

    /// The addresses `authority` may be connected to, in the order to attempt them
    /// (``SharedAddressRanking/attemptOrder(_:for:port:happyEyeballs:at:)`` with a ranking, else
    /// ``HappyEyeballs/order(_:)``): those the resolver answers, or those a `pin` rule gives. A pin rule's addresses are the operator's own, so ``allowPrivate`` does not
    /// apply to them; the proxy's own address is refused either way.
    ///
    /// - Throws: ``ProxyError/nameNotResolved(_:_:)``, ``ProxyError/privateAddress(_:)``,
    ///   ``ProxyError/targetIsProxy(_:)``.
    func addresses(for authority: RequestTarget.Authority, _ pinned: PinnedAddresses) async throws(ProxyError) -> Pinning {
        switch pinned {
        case .pinned(let ruleAddresses, _):
            return try pinning(ruleAddresses, source: .pinnedByRule, for: authority)
        case .resolve:
            if let cached = try cachedPinning(for: authority) { return cached }
            let resolution: Resolution
            do throws(ResolutionError) {
                resolution = try await resolver.resolve(authority.host, family: .any)
            } catch {
                throw .nameNotResolved(authority.host, error)
            }
            return try pinning(admitted(resolution.ipAddresses, for: authority.host), source: .resolved(resolution.source),
                               for: authority)
        }
    }

    /// ``addresses(for:_:)`` for a name the resolver has a fresh answer for, read in place (no
    /// `Resolution` built, no wait); `nil` when it has none (an IP literal too: the resolver answers it).
    ///
    /// - Throws: ``ProxyError/privateAddress(_:)``, ``ProxyError/targetIsProxy(_:)``.
    func cachedPinning(for authority: RequestTarget.Authority) throws(ProxyError) -> Pinning? {
        guard let cached = resolver.cachedAddresses(authority.host, family: .any) else { return nil }
        return try pinning(admitted(cached.map(\.address), for: authority.host), source: .resolved(.cache), for: authority)
    }

    /// Where `address` comes from if a request for `authority` may still go there: the address a kept
    /// connection is connected to, when ``cachedPinning(for:)`` still gives it (the resolver's fresh
    /// answer, read in place, holds it, admitted, and it is not the proxy's own endpoint); `nil` when it
    /// does not, or on a miss or a refusal (the connection's task then decides and answers). An answer
    /// of one address is checked in place, without the arrays ``cachedPinning(for:)`` orders (a keep-alive
    /// relay asks this for every request); one of several takes that whole reading, and starts the
    /// ranking's probe of those unmeasured (``probeUnmeasured(_:_:)``), as a request's task does.
    func cachedSource(keeping address: SocketAddress, for authority: RequestTarget.Authority) -> AddressSource? {
        guard let cached = resolver.cachedAddresses(authority.host, family: .any) else { return nil }
        if cached.count == 1, allowPrivate || cached[0].address.specialPurposeBlock == nil {
            guard cached[0].address == address.address, address.port == authority.port,
                  !(proxy?.isReached(by: address) ?? false)
            else { return nil }
            return .resolved(.cache)
        }
        guard let pinning = try? cachedPinning(for: authority), pinning.addresses.contains(address) else { return nil }
        probeUnmeasured(authority, pinning.addresses)
        return pinning.source
    }

    /// The resolved addresses a connection may go to: special-purpose ones refused (``RebindingGuard``)
    /// unless allowed.
    private func admitted(_ resolved: [IPAddress], for host: HostName) throws(ProxyError) -> [IPAddress] {
        guard !allowPrivate else { return resolved }
        do throws(RebindingRefusal) {
            return try RebindingGuard.admitted(resolved, for: host)
        } catch {
            // A name whose route allows private addresses (split DNS: internal resolvers answer
            // RFC 1918 ones) passes; a public name that resolves privately is still refused. Asked
            // only here, so an ordinary connection never looks its route up.
            guard resolver.allowsPrivateAddresses(for: host) else { throw .privateAddress(error) }
            return resolved
        }
    }

    /// `addresses` in attempt order, with the port; the proxy's own endpoint refused.
    private func pinning(_ addresses: [IPAddress], source: AddressSource,
                         for authority: RequestTarget.Authority) throws(ProxyError) -> Pinning {
        let ordered = ranking?.attemptOrder(addresses, for: authority.host.description, port: authority.port,
                                            happyEyeballs: happyEyeballs) ?? happyEyeballs.order(addresses)
        let allowed = ordered.map { SocketAddress(address: $0, port: authority.port) }
        if let proxy, let loop = allowed.first(where: proxy.isReached(by:)) {
            throw .targetIsProxy(loop)
        }
        return Pinning(addresses: allowed, source: source)
    }

    /// Starts a background TCP probe (``RankingProbe``) of a plain-HTTP origin's `addresses` when there
    /// are several and ``ranking`` lacks a time for one: ``connect(host:addresses:recordsTime:)`` times
    /// only the race's winner, so a slow address measured once would stay ahead of a fast one never tried.
    func probeUnmeasured(_ authority: RequestTarget.Authority, _ addresses: [SocketAddress]) {
        guard let probe, let ranking, addresses.count > 1 else { return }
        let ips = addresses.map(\.address)
        guard ranking.lacksTime(for: ips, port: authority.port) else { return }
        probe.probe(authority.host, port: authority.port, addresses: ips, handshake: .tcp)
    }

    /// Connects to one of `addresses` (in ``HappyEyeballs/order(_:)``'s order, as ``addresses(for:_:)``
    /// gives them), racing them as RFC 8305 §5 says (``ConnectionRace``): the first at once, each next
    /// one when the previous attempt fails or after ``happyEyeballs``' attempt delay (250 ms, on the event
    /// loop's timers) with no connection yet; the first to connect wins and the other attempts are
    /// cancelled. Each attempt may take ``connectTimeout``.
    ///
    /// With `recordsTime`, the winner's connect time goes into ``ranking``: only for plain-HTTP origins,
    /// whose TCP connection is all there is to measure. A CONNECT tunnel's TLS is end to end, so its TCP
    /// time says nothing about the certificate (a sinkhole answers fastest): its ranking is to come from a
    /// TLS probe of its own (issue 30), not from here.
    ///
    /// - Throws: ``ProxyError/noAddressConnected(host:failures:)`` (the failures in the order they
    ///   happened), or ``ProxyError/connectTimedOut(host:failures:)`` when every attempt timed out.
    func connect(host: HostName, addresses: [SocketAddress], recordsTime: Bool = false) async throws(ProxyError) -> Connection {
        let result: Result<Connection, ConnectFailures>
        if addresses.count == 1 {
            // Nothing to race: no task group (the common case).
            do throws(SocketError) {
                let began = ContinuousClock.now
                let channel = try await SocketChannel.connect(to: addresses[0], deadline: .after(connectTimeout))
                result = .success(Connection(channel: channel, address: addresses[0], connectTime: .now - began))
            } catch {
                result = .failure(ConnectFailures(failures: [ProxyError.ConnectFailure(address: addresses[0], error: error)]))
            }
        } else {
            result = await Self.race(addresses, delay: happyEyeballs.attemptDelay, timeout: connectTimeout)
        }
        switch result {
        case .success(let connection):
            if recordsTime {
                ranking?.record(connection.connectTime, to: connection.address.address, port: connection.address.port)
            }
            return connection
        case .failure(let lost):
            let failures = lost.failures
            if !failures.isEmpty, failures.allSatisfy({ $0.error == .timedOut }) {
                throw .connectTimedOut(host: host, failures: failures)
            }
            throw .noAddressConnected(host: host, failures: failures)
        }
    }

    /// What one child task of the race reports.
    private enum RaceEvent: Sendable {
        case connected(Int, SocketChannel, Duration)
        case failed(Int, SocketError)
        case timer(ConnectionRace.Timer)
    }

    /// Runs a ``ConnectionRace`` over `addresses`: attempts and timers are child tasks of one group, whose
    /// events the race turns into the next actions.
    private static func race(_ addresses: [SocketAddress], delay: Duration, timeout: Duration)
        async -> Result<Connection, ConnectFailures>
    {
        await withTaskGroup(of: RaceEvent.self) { group in
            var race = ConnectionRace(count: addresses.count, attemptDelay: delay)
            var failures: [ProxyError.ConnectFailure] = []
            var connected: [Int: (channel: SocketChannel, time: Duration)] = [:]
            var actions = race.start()
            var result: Result<Connection, ConnectFailures>?
            while result == nil {
                for action in actions {
                    switch action {
                    case .connect(let index):
                        let address = addresses[index]
                        group.addTask {
                            let began = ContinuousClock.now
                            do throws(SocketError) {
                                let channel = try await SocketChannel.connect(to: address, deadline: .after(timeout))
                                return .connected(index, channel, .now - began)
                            } catch {
                                return .failed(index, error)
                            }
                        }
                    case .startTimer(let timer, let delay):
                        group.addTask {
                            await EventLoop.shared.sleep(until: .now + delay)
                            return .timer(timer)
                        }
                    case .won(let index, _):
                        if let winner = connected.removeValue(forKey: index) {
                            result = .success(Connection(channel: winner.channel, address: addresses[index], connectTime: winner.time))
                        }
                    case .abandon(let index):
                        connected.removeValue(forKey: index)?.channel.close()
                    case .lost:
                        result = .failure(ConnectFailures(failures: failures))
                    }
                }
                guard result == nil, let event = await group.next() else { break }
                switch event {
                case .connected(let index, let channel, let time):
                    connected[index] = (channel, time)
                    actions = race.attemptConnected(index)
                case .failed(let index, let error):
                    failures.append(ProxyError.ConnectFailure(address: addresses[index], error: error))
                    // The caller was cancelled or the proxy is stopping: no further attempt.
                    if error == .cancelled || error == .closed {
                        result = .failure(ConnectFailures(failures: failures))
                    } else {
                        actions = race.attemptFailed(index)
                    }
                case .timer(let timer):
                    actions = race.timerFired(timer)
                }
            }
            // Attempts still running are cancelled; one that connected meanwhile is closed.
            group.cancelAll()
            while let event = await group.next() {
                if case .connected(_, let channel, _) = event { channel.close() }
            }
            return result ?? .failure(ConnectFailures(failures: failures))
        }
    }
}

/// The failed attempts of a lost race, in the order they failed.
private struct ConnectFailures: Error {
    let failures: [ProxyError.ConnectFailure]
}
