import HostPin
import HostPinNet

/// Turns a request's authority into a TCP connection to one of its pinned addresses: resolves the name
/// through the trusted resolver, refuses special-purpose addresses unless allowed, and tries every
/// remaining address in answer order until one accepts (so `multi.example.test`, whose first address is
/// dead, still connects).
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

    /// The pinned addresses `authority` may be connected to, in order.
    ///
    /// - Throws: ``ProxyError/nameNotResolved(_:_:)``, ``ProxyError/privateAddress(host:address:block:)``,
    ///   ``ProxyError/targetIsProxy(_:)``.
    func pinnedAddresses(for authority: RequestTarget.Authority) async throws(ProxyError) -> [SocketAddress] {
        let resolution: Resolution
        do throws(ResolutionError) {
            resolution = try await resolver.resolve(authority.host, family: .any)
        } catch {
            throw .nameNotResolved(authority.host, error)
        }
        var allowed: [SocketAddress] = []
        var refused: (IPAddress, IPAddress.SpecialPurposeBlock)?
        for address in resolution.ipAddresses {
            if !allowPrivate, let block = address.specialPurposeBlock {
                refused = refused ?? (address, block)
                continue
            }
            allowed.append(SocketAddress(address: address, port: authority.port))
        }
        if allowed.isEmpty, let refused {
            throw .privateAddress(host: authority.host, address: refused.0, block: refused.1)
        }
        if let proxy, let loop = allowed.first(where: proxy.isReached(by:)) {
            throw .targetIsProxy(loop)
        }
        return allowed
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
