import HostPin
import HostPinNet

/// Turns a request's authority into a TCP connection to one of its pinned addresses: resolves the name
/// through the trusted resolver (or takes a `pin` rule's addresses), refuses special-purpose addresses
/// of a resolved name unless allowed (``RebindingGuard``), and tries every remaining address in answer
/// order until one accepts (so `multi.example.test`, whose first address is dead, still connects).
struct OriginConnector: Sendable {
    let resolver: any HostResolver
    let allowPrivate: Bool
    let connectTimeout: Duration
    /// The proxy's own listening endpoint: a target that reaches it is refused (it would loop).
    let proxy: ListeningEndpoint?

    /// A connected origin.
    struct Connection: Sendable {
        let channel: SocketChannel
        let address: SocketAddress
    }

    /// The addresses a request may be connected to, and where they came from.
    struct Pinning: Sendable {
        let addresses: [SocketAddress]
        let source: AddressSource
    }

    /// The addresses `authority` may be connected to, in order: those the resolver answers, or those a
    /// `pin` rule gives. A pin rule's addresses are the operator's own, so ``allowPrivate`` does not
    /// apply to them; the proxy's own address is refused either way.
    ///
    /// - Throws: ``ProxyError/nameNotResolved(_:_:)``, ``ProxyError/privateAddress(_:)``,
    ///   ``ProxyError/targetIsProxy(_:)``.
    func addresses(for authority: RequestTarget.Authority, _ pinned: PinnedAddresses) async throws(ProxyError) -> Pinning {
        let addresses: [IPAddress]
        let source: AddressSource
        switch pinned {
        case .pinned(let ruleAddresses, _):
            addresses = ruleAddresses
            source = .pinnedByRule
        case .resolve:
            let resolution: Resolution
            do throws(ResolutionError) {
                resolution = try await resolver.resolve(authority.host, family: .any)
            } catch {
                throw .nameNotResolved(authority.host, error)
            }
            source = .resolved(resolution.source)
            if allowPrivate {
                addresses = resolution.ipAddresses
            } else {
                do throws(RebindingRefusal) {
                    addresses = try RebindingGuard.admitted(resolution.ipAddresses, for: authority.host)
                } catch {
                    throw .privateAddress(error)
                }
            }
        }
        let allowed = addresses.map { SocketAddress(address: $0, port: authority.port) }
        if let proxy, let loop = allowed.first(where: proxy.isReached(by:)) {
            throw .targetIsProxy(loop)
        }
        return Pinning(addresses: allowed, source: source)
    }

    /// Connects to the first of `addresses` that accepts, each within ``connectTimeout``.
    ///
    /// - Throws: ``ProxyError/noAddressConnected(host:failures:)``, or
    ///   ``ProxyError/connectTimedOut(host:failures:)`` when every address timed out.
    func connect(host: HostName, addresses: [SocketAddress]) async throws(ProxyError) -> Connection {
        var failures: [ProxyError.ConnectFailure] = []
        for address in addresses {
            do throws(SocketError) {
                let channel = try await SocketChannel.connect(to: address, deadline: .after(connectTimeout))
                return Connection(channel: channel, address: address)
            } catch {
                failures.append(ProxyError.ConnectFailure(address: address, error: error))
                if error == .cancelled || error == .closed { break }
            }
        }
        if !failures.isEmpty, failures.allSatisfy({ $0.error == .timedOut }) {
            throw .connectTimedOut(host: host, failures: failures)
        }
        throw .noAddressConnected(host: host, failures: failures)
    }
}
