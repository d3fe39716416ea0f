import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin

extension PinnedURLProtocol {
    /// Receives one ``Event`` per request the interceptor handled, set with
    /// ``install(resolver:family:extraCAFile:redirects:cookieStorage:plainHTTP:rules:allowPrivate:observer:ranking:)``.
    ///
    /// Called once the request has ended (a response delivered whole, a failure, or `cancel()`), before
    /// the task hears of its end, on whichever thread ended it (curl's, the inner session's delegate
    /// queue, a resolver task, Foundation's work queue for a cancellation): it must return quickly and
    /// never block. A request a `pass` rule decides at the start never reaches the interceptor
    /// (``canInit(with:)`` declines it), so it has no event; a redirect hop to such a host has one.
    public typealias Observer = @Sendable (Event) -> Void

    /// One request as the interceptor handled it: each hop (the request, then each redirect followed)
    /// with the rules that decided it, where its addresses came from, which ones were attempted and which
    /// one answered; the body bytes delivered, how long it took and how it ended.
    public struct Event: Sendable {
        /// The URL the application asked for.
        public let url: URL
        /// The request's hops in order: the application's request, then one per redirect followed.
        public let hops: [Hop]
        /// Response body bytes delivered to the application (after content decoding).
        public let bytes: Int
        /// From `startLoading` to the end (monotonic clock).
        public let duration: Duration
        public let outcome: Outcome

        /// The redirects followed (the URL of every hop after the first).
        public var redirects: [URL] { hops.dropFirst().map(\.url) }
        /// The last hop: where the response (or the failure) came from.
        public var finalHop: Hop? { hops.last }
    }

    /// One request sent (or answered, or refused) on the way to the response.
    public struct Hop: Sendable {
        /// The hop's URL as the application sees it.
        public let url: URL
        /// The URL actually fetched: `url`, or a transparent redirect rule's target.
        public let fetchedURL: URL
        /// The rules that decided the hop, in order: a transparent redirect's rule, then its target's
        /// (`header` rules, which edit and do not decide, are not listed). Empty when none did.
        public let rules: [RuleReference]
        /// The host of ``fetchedURL``.
        public let host: String
        /// What carried the hop; `nil` when nothing was sent (a `block` rule, a name that did not
        /// resolve, the rebinding guard).
        public let transport: Transport?
        /// Where the addresses came from; `nil` when none were looked up (a local response, a refusal).
        public let source: AddressSource?
        /// The addresses the hop could go to, in the order they were to be attempted (Happy Eyeballs);
        /// empty when none were looked up, or the system's resolver had them (`pass`).
        public let addresses: [IPAddress]
        /// The connection attempts, in the order they started; empty when a kept-alive connection was
        /// reused, or nothing was sent.
        public let attempts: [Attempt]
        /// The address the response came from; `nil` when none did (or libcurl could not say).
        public let address: IPAddress?
        /// The hop's response status; `nil` when it got none.
        public let status: Int?
        /// The addresses whose TLS certificate failed the check for ``host``, in the order met: likely
        /// sinkholes. The hop moved on to its other addresses (no byte of the request had been sent), and
        /// the address ranking, if any, excludes each for the name from then on.
        public let certificateRefused: [IPAddress]
    }

    /// One connection attempt to one address.
    public struct Attempt: Sendable, Hashable {
        public let address: IPAddress
        /// When it started, from the request's start (monotonic clock).
        public let after: Duration
    }

    /// What carried a hop.
    public enum Transport: String, Sendable, Hashable {
        /// The inner URLSession (plain HTTP to an IPv4 address).
        case urlSession
        /// libcurl (HTTPS, IPv6, both families, plain HTTP with `plainHTTP: .libcurl`, a `pass` hop).
        case libcurl
        /// A `respond` rule's response, or a `redirect` rule's 3xx: no network.
        case localResponse
    }

    /// Where a hop's addresses came from.
    public enum AddressSource: String, Sendable, Hashable {
        /// A trusted upstream, just now.
        case upstream
        /// HostPin's cache, within the TTL.
        case cache
        /// HostPin's cache past the TTL, because no trusted upstream answered (serve-stale).
        case stale
        /// The untrusted fallback (only when configured and every trusted upstream failed).
        case untrusted
        /// The URL names an IP literal or `localhost`: no query.
        case literal
        /// A `pin` rule: no query.
        case pinned
        /// A `pass` rule: the system's resolver (through libcurl), not HostPin.
        case pass

        init(_ source: Resolution.Source) {
            switch source {
            case .upstream: self = .upstream
            case .cache, .negativeCache, .sharedCache: self = .cache
            case .stale: self = .stale
            case .untrusted: self = .untrusted
            case .literal, .specialUse: self = .literal
            case .pinned: self = .pinned
            }
        }
    }

    /// How a request ended.
    public enum Outcome: Sendable {
        /// A response was delivered whole, with this status.
        case response(status: Int)
        /// The request failed (`.cancelled` when the task was cancelled).
        case failed(URLError)
    }
}
