import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin
import Synchronization

/// A `URLProtocol` that sends plain-HTTP requests to the address HostPin pinned for their host.
///
/// For an `http` URL whose host is a name (not an IP literal, not `localhost`), `startLoading` resolves
/// the host through the installed resolver (``PinnedURLProtocol/install(resolver:family:)``), swaps the
/// URL's host for the first pinned address (IPv6 in brackets), sets `Host` to the original host (with
/// `:port` only for a non-default port), and sends the request through an inner `URLSession`. The
/// response streams back with the ORIGINAL URL; 3xx responses reach the client as they are; the inner
/// session stores no cookies. `https` is not intercepted yet: it passes to URLSession untouched.
///
/// Use it through ``Foundation/URLSessionConfiguration/pinned(resolver:family:base:)`` or
/// `URLProtocol.registerClass(PinnedURLProtocol.self)` after ``install(resolver:family:)``.
///
/// Errors reach the client as `URLError`: `.cannotFindHost` (NXDOMAIN, NODATA), `.dnsLookupFailed`
/// (upstream failure, timeout), `.badURL` (invalid host name), and the inner session's own errors
/// (`.cannotConnectToHost`, `.timedOut`, …) with the original URL as the failing URL.
public final class PinnedURLProtocol: URLProtocol {
    /// Which resolver and address family every instance uses. Foundation creates protocol instances
    /// itself, so this is process-wide.
    struct Settings: Sendable {
        let resolver: any HostResolver
        let family: AddressFamily
    }

    private static let settings = Mutex<Settings?>(nil)

    /// Makes `resolver` the one every `PinnedURLProtocol` in the process resolves with.
    ///
    /// - Parameters:
    ///   - resolver: Usually a `CachingResolver` over a `TrustedResolver`.
    ///   - family: The address records asked for; `any` by default (A first, then AAAA).
    public static func install(resolver: any HostResolver, family: AddressFamily = .any) {
        settings.withLock { $0 = Settings(resolver: resolver, family: family) }
    }

    /// Whether HostPin pins `request`: an `http` URL whose host is a name, not an IP literal or
    /// `localhost` (RFC 6761 §6.3). The interceptor's own requests name an IP, so they are never taken
    /// again.
    public override class func canInit(with request: URLRequest) -> Bool {
        guard let url = request.url, url.scheme?.lowercased() == "http", let host = url.host, !host.isEmpty
        else { return false }
        guard let name = try? HostName.parse(host) else { return true }  // fails in startLoading, with the reason
        return name.literalAddress == nil && !name.isLocalhost
    }

    /// `request` unchanged (on Linux this is never called; the rewrite happens in `startLoading`).
    public override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    /// The running load; set in `startLoading` and read in `stopLoading`, both on Foundation's work queue.
    private var load: PinnedLoad?

    public override func startLoading() {
        // We are on FoundationNetworking's shared work queue: read what needs it, then hop off before
        // touching any URLSession (resume() syncs onto this queue and would trap).
        let load = PinnedLoad(client: ClientReference(self), request: request, delivery: ResponseDelivery(for: task),
                              settings: Self.settings.withLock { $0 })
        self.load = load
        load.start()
    }

    public override func stopLoading() {
        load?.stop()
    }
}
