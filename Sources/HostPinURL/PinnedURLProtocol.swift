import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin
import Synchronization

/// A `URLProtocol` that sends HTTP and HTTPS requests to the addresses HostPin pinned for their host.
///
/// For an `http` or `https` URL whose host is a name (not an IP literal, not `localhost`),
/// `startLoading` resolves the host through the installed resolver
/// (``PinnedURLProtocol/install(resolver:family:extraCAFile:redirects:cookieStorage:plainHTTP:rules:allowPrivate:observer:ranking:)``) and sends the request to the
/// pinned addresses, moving to the next when a connection cannot be made:
/// - plain HTTP to IPv4: the URL's host swapped for the address, `Host` set to the original host (with
///   `:port` only for a non-default port), sent through an inner `URLSession`;
/// - HTTPS, IPv6 addresses, and names with both A and AAAA: libcurl with `CURLOPT_CONNECT_TO`, so the URL
///   keeps the name and TLS SNI and certificate verification use it (verification is never turned off),
///   and a kept-alive connection is reused only when it goes to the addresses pinned for this request.
///   libcurl races a name's families as Happy Eyeballs does (RFC 8305: IPv6 first, IPv4 after 250 ms
///   without a connection; ``HappyEyeballs``).
///
/// Before any of that, the installed ``Rules`` decide each request (and each redirect hop, and each
/// transparent redirect's target): a `block` rule fails it with `.resourceUnavailable` naming the rule
/// (``ruleUserInfoKey``); `respond` answers it locally; `redirect` fetches another URL transparently
/// (the response keeps the URL asked for) or answers with a 3xx that the redirect policy follows; `pin`
/// sends it to fixed addresses without DNS; `header` rules edit its header fields; and a `pass` rule
/// leaves it to URLSession's own HTTP (``canInit(with:)`` declines it; a redirect hop to such a host is
/// sent by libcurl resolving the name through the system, since a protocol cannot hand a hop back).
///
/// With `allowPrivate: false` the DNS-rebinding guard (`RebindingGuard`, shared with the proxy) is on:
/// a name HostPin resolves may not lead to a special-purpose address (RFC 6890); IP literals, `localhost`
/// and pin rules' addresses are never guarded.
///
/// Redirects are followed per ``RedirectPolicy`` (each hop resolved and pinned on its own; the request's
/// own `Authorization` and `Cookie` go to its origin only, as in curl); `Set-Cookie` is filed under each
/// hop's original host in the configured cookie storage (no transport stores cookies, so none is ever
/// filed under an IP). The response streams back with the ORIGINAL (final) URL.
///
/// Use it through ``Foundation/URLSessionConfiguration/pinned(resolver:family:extraCAFile:redirects:plainHTTP:rules:allowPrivate:observer:ranking:base:)`` or
/// `URLProtocol.registerClass(PinnedURLProtocol.self)` after ``install(resolver:family:extraCAFile:redirects:cookieStorage:plainHTTP:rules:allowPrivate:observer:ranking:)``.
///
/// An ``Observer`` set at install receives one ``Event`` per request: the rules that decided each hop, where
/// its addresses came from, the connection attempts and the address that answered, the transport, bytes,
/// duration and outcome.
///
/// Errors reach the client as `URLError` with the original URL as the failing URL: `.cannotFindHost`
/// (NXDOMAIN, NODATA), `.dnsLookupFailed` (upstream failure, resolver timeout), `.badURL` (invalid
/// host name), `.cannotConnectToHost` (no address connects), `.serverCertificateUntrusted` (certificate
/// not trusted or for another name), `.secureConnectionFailed` (other TLS failures), `.timedOut`,
/// `.cancelled`, and `.resourceUnavailable` for a request a `block` rule or the rebinding guard refused.
public final class PinnedURLProtocol: URLProtocol {
    /// Which resolver and address family every instance uses. Foundation creates protocol instances
    /// itself, so this is process-wide.
    struct Settings: Sendable {
        let resolver: any HostResolver
        let family: AddressFamily
        let tls: CurlTransport.TLS
        let redirects: RedirectPolicy
        let cookieStorage: HTTPCookieStorage?
        let plainHTTP: PlainHTTPTransport
        let rules: Rules
        let allowPrivate: Bool
        let observer: Observer?
        /// Where connection times and sinkhole exclusions are learnt and addresses ranked; `nil`: answer order.
        let ranking: SharedAddressRanking?
        /// Measures in the background the addresses of an HTTPS name that ``ranking`` has no time for
        /// yet (``RankingProbe``); made with the ranking, `nil` without one.
        let probe: RankingProbe?
    }

    /// The `URLError.userInfo` key under which a request refused by a `block` rule names the rule
    /// (`rules[0] (block host ads.example.test)`, a `String`).
    public static let ruleUserInfoKey = "HostPinRule"

    /// What carries plain-HTTP requests to IPv4 addresses.
    public enum PlainHTTPTransport: Sendable {
        /// An inner URLSession (the default): the URL's host swapped for the address, `Host` set.
        case urlSession
        /// libcurl with `CURLOPT_CONNECT_TO`, as for HTTPS. Faster: FoundationNetworking runs every
        /// URLSession task, the application's and the inner one, on one work queue, and the inner task
        /// doubles that queue's work.
        case libcurl
    }

    private static let settings = Mutex<Settings?>(nil)

    /// Makes `resolver` the one every `PinnedURLProtocol` in the process resolves with.
    ///
    /// - Parameters:
    ///   - resolver: Usually a `CachingResolver` over a `TrustedResolver`.
    ///   - family: The address records asked for; `any` by default (both, raced IPv6 first as RFC 8305
    ///     says); `v4` or `v6` pins one family only.
    ///   - extraCAFile: A PEM file of CA certificates trusted for HTTPS in addition to the system's;
    ///     `nil` (the default) trusts the system's CAs only. Verification is never turned off.
    ///   - redirects: What to do with 3xx responses; URLSession's default (follow, 16 hops) by default.
    ///   - cookieStorage: Where `Set-Cookie` from every hop is filed, under the hop's original URL, and
    ///     where a followed redirect's cookies come from; `.shared` by default, `nil` for none.
    ///     (URLSession adds the first request's `Cookie` header itself, from its own configuration.)
    ///   - plainHTTP: What carries plain HTTP to IPv4 addresses; an inner URLSession by default.
    ///   - rules: The interception rules every request is decided by first (README.md, "Rules"), each
    ///     redirect hop and transparent target again; none by default. Load a file with
    ///     `try Rules(contentsOf:)`.
    ///   - allowPrivate: Whether a name HostPin resolves may lead to special-purpose addresses (RFC 6890:
    ///     private, loopback, link-local, …); `true` by default. With `false`, the DNS-rebinding guard
    ///     (``RebindingGuard``) is on: such addresses are dropped from the answer, and a name with no
    ///     other address fails with `.resourceUnavailable` naming the address and its block. IP literals,
    ///     `localhost` and a `pin` rule's addresses are never guarded.
    ///   - observer: Receives one ``Event`` per request (rules, hops, addresses, transport, bytes, duration,
    ///     outcome); `nil` (the default) records nothing, at no cost.
    ///   - ranking: Where the verified connection times of this configuration's transfers are learnt and
    ///     a name's addresses ranked by them before Happy Eyeballs orders the families (RFC 8305 §4;
    ///     ``AddressRanking``); a new one of its own by default (pass the service's to share it), `nil`
    ///     to keep the answer order. With a ranking, an HTTPS hop to a name with several addresses, one of
    ///     which the ranking has no time for, also starts a background TLS probe of them (``RankingProbe``:
    ///     a handshake each, `extraCAFile` trusted, no request sent; each name and port once per 5
    ///     minutes): a transfer measures only the address it used, and without the probe an address that
    ///     answered slowly once would stay ahead of a faster one never tried.
    public static func install(resolver: any HostResolver, family: AddressFamily = .any,
                               extraCAFile: String? = nil, redirects: RedirectPolicy = .default,
                               cookieStorage: HTTPCookieStorage? = .shared, plainHTTP: PlainHTTPTransport = .urlSession,
                               rules: Rules = Rules(), allowPrivate: Bool = true, observer: Observer? = nil,
                               ranking: SharedAddressRanking? = SharedAddressRanking()) {
        let tls = CurlTransport.TLS(extraCAFile: extraCAFile)
        var probing = RankingProbe.Configuration()
        probing.caFile = extraCAFile
        let probe = ranking.map { RankingProbe(ranking: $0, configuration: probing) }
        settings.withLock {
            $0 = Settings(resolver: resolver, family: family, tls: tls, redirects: redirects,
                          cookieStorage: cookieStorage, plainHTTP: plainHTTP, rules: rules, allowPrivate: allowPrivate,
                          observer: observer, ranking: ranking, probe: probe)
        }
    }

    /// Tells the interceptor the network changed (a ``NetworkChange``, from `HostPinNet`'s
    /// `NetworkMonitor` or the app's own watch): the origin connections libcurl keeps between requests
    /// were made on the old path, so they are closed, as soon as no transfer is in flight (those in flight
    /// finish; curl retries a request whose reused connection turns out dead on a fresh one). Plain `http`
    /// left to the inner URLSession keeps FoundationNetworking's own connections, which it does not expose.
    /// The installed address ranking is emptied (connection times on the old path mean nothing on the
    /// new) and its probe may ask every name again.
    /// Safe from any thread; returns at once.
    public static func networkChanged(_ change: NetworkChange = NetworkChange()) {
        CurlTransport.closeAllConnections()
        let (ranking, probe) = settings.withLock { ($0?.ranking, $0?.probe) }
        ranking?.removeAll()
        probe?.forgetProbed()
    }

    /// Whether HostPin takes `request`: `https` to any host, and `http` to a name or an IPv6 literal,
    /// unless a `pass` rule decides it.
    ///
    /// Names (not `localhost`, RFC 6761 §6.3) are resolved and pinned. IP literals and `localhost` need no
    /// resolution, but `https` ones still go through libcurl so the extra CA file applies, and IPv6
    /// literals over `http` too (FoundationNetworking cannot fetch them). Plain `http` to an IPv4 literal
    /// or `localhost` passes to URLSession untouched — which is also what keeps the interceptor from
    /// taking its own inner requests, all of which name an IPv4 address. A request a `pass` rule decides
    /// goes to URLSession's own HTTP, which resolves the name as if HostPin were absent.
    public override class func canInit(with request: URLRequest) -> Bool {
        guard let url = request.url, let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty,
              scheme == "http" || scheme == "https"
        else { return false }
        if let rules = settings.withLock({ $0?.rules }), !rules.isEmpty, let policy = PolicyRequest(request),
           case .pass(.rule) = rules.decide(policy) {
            return false
        }
        if scheme == "https" { return true }
        guard let name = try? HostName.parse(host) else { return true }  // fails in startLoading, with the reason
        if let literal = name.literalAddress { return literal.family == .v6 }
        return !name.isLocalhost
    }

    /// `request` unchanged (on Linux this is never called; the rewrite happens in `startLoading`).
    public override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    /// The running load; set in `startLoading` and read in `stopLoading`, both on Foundation's work queue.
    private var load: PinnedLoad?

    public override func startLoading() {
        // We are on FoundationNetworking's shared work queue: read what needs it, then hop off before
        // touching any URLSession (resume() syncs onto this queue and would trap).
        let body = RequestBody(request: request, task: task)
        if task is URLSessionUploadTask, case .none = body {
            client?.urlProtocol(self, didFailWithError: URLError(.requestBodyStreamExhausted, url: request.url,
                                                                 description: RequestBody.missingUploadBody))
            return
        }
        let queue = task.flatMap { Reflection.child("workQueue", of: $0) as? DispatchQueue }
        let load = PinnedLoad(client: ClientReference(self, queue: queue), request: request, body: body,
                              delivery: ResponseDelivery(for: task), settings: Self.settings.withLock { $0 })
        self.load = load
        load.start()
    }

    public override func stopLoading() {
        load?.stop()
    }
}
