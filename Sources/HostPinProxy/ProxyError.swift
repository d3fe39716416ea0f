import HostPin

/// Why the proxy answered a request with an error instead of the origin's response. Closed: each case
/// has one status (``status``) and one sentence (``description``), sent as a one-line text body.
///
/// | status | cases |
/// |---|---|
/// | 400 | malformed request head or body, origin-form or `*` request to the proxy, CONNECT with a body |
/// | 403 | CONNECT port not allowed, private address not allowed, target is the proxy itself, blocked by a rule, a rule's local response asked for through a tunnel |
/// | 408 | the request head did not arrive within the head timeout |
/// | 414, 431, 501, 505 | the head problems ``HeadError/status`` names |
/// | 502 | name not resolved, no address connects, origin closed or sent a malformed response, a rule's transparent redirect the proxy cannot follow |
/// | 503 | the proxy already serves its maximum number of connections (with `Retry-After`) |
/// | 504 | connecting or the response head took longer than the configured timeouts |
public enum ProxyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The request head breaks RFC 9112 (status from ``HeadError/status``).
    case malformedRequest(HeadError)
    /// The client began a request head but did not complete it within the head timeout (RFC 9110
    /// §15.5.9): a slow or stalled client, or a slowloris attack.
    case requestHeadTimedOut(timeout: Duration)
    /// The proxy already serves ``ForwardProxy/Configuration/maximumConnections`` connections (RFC 9110
    /// §15.6.4); sent as soon as the connection is accepted, before its request is read.
    case overloaded(maximumConnections: Int)
    /// The request's chunked body is malformed.
    case malformedBody(ChunkError)
    /// An origin-form (`GET / HTTP/1.1`) or asterisk-form request: this is a proxy, not an origin, and
    /// answering it from the `Host` field could loop back into the proxy.
    case notAProxyRequest(target: String)
    /// A CONNECT request carries a body, which has no meaning (RFC 9110 §9.3.6).
    case connectWithBody
    /// CONNECT to a port that is not allowed (by default only 443).
    case connectPortNotAllowed(port: UInt16, allowed: [UInt16])
    /// Every pinned address of the host is special-purpose (private, loopback, link-local, …) and
    /// private targets are not allowed (``RebindingGuard``).
    case privateAddress(RebindingRefusal)
    /// The target is the proxy's own listening address (the request would loop).
    case targetIsProxy(SocketAddress)
    /// A `block` rule refuses the request (or the tunnel).
    case blocked(RuleReference)
    /// A `respond` rule answers the CONNECT tunnel's host: the requests are inside TLS, where the proxy
    /// cannot answer them, so the tunnel is refused.
    case localResponseForTunnel(RuleReference)
    /// A transparent `redirect` rule sends the request to a URL the proxy does not fetch (https: the
    /// proxy forwards plain HTTP and has no TLS client of its own).
    case ruleTargetNotProxied(RuleReference, target: String)
    /// Transparent `redirect` rules sent the request on more than 16 times (a loop the load-time check
    /// cannot see); the last rule.
    case tooManyRuleRedirects(RuleReference)
    /// The host name did not resolve through the trusted upstreams.
    case nameNotResolved(HostName, ResolutionError)
    /// No pinned address accepted a connection; each address tried and why it failed.
    case noAddressConnected(host: HostName, failures: [ConnectFailure])
    /// Every pinned address timed out while connecting.
    case connectTimedOut(host: HostName, failures: [ConnectFailure])
    /// The origin did not send a response head within the origin timeout.
    case originTimedOut(SocketAddress, timeout: Duration)
    /// The origin closed the connection before a complete response head.
    case originClosed(SocketAddress)
    /// The origin's response head is not HTTP/1.x.
    case badOriginResponse(SocketAddress, HeadError)

    /// One address that could not be connected to.
    public struct ConnectFailure: Sendable, Hashable, CustomStringConvertible {
        public let address: SocketAddress
        public let error: SocketError

        public var description: String { "\(address): \(error)" }
    }

    /// The resolution's sentence when the host could not be resolved (the access log's last field), `nil`
    /// for every other error.
    public var resolutionFailure: String? {
        if case .nameNotResolved(_, let error) = self { error.description } else { nil }
    }

    /// The HTTP status code sent (RFC 9110 §15).
    public var status: Int {
        switch self {
        case .malformedRequest(let error): error.status
        case .malformedBody, .notAProxyRequest, .connectWithBody: 400
        case .connectPortNotAllowed, .privateAddress, .targetIsProxy, .blocked, .localResponseForTunnel: 403
        case .requestHeadTimedOut: 408
        case .overloaded: 503
        case .nameNotResolved, .noAddressConnected, .originClosed, .badOriginResponse, .ruleTargetNotProxied,
             .tooManyRuleRedirects:
            502
        case .connectTimedOut, .originTimedOut: 504
        }
    }

    /// One sentence, without a final newline.
    public var description: String {
        switch self {
        case .malformedRequest(let error): "Malformed request: \(error)."
        case .requestHeadTimedOut(let timeout): "The request head did not arrive within \(timeout.proxySeconds)."
        case .overloaded(let maximum):
            "The proxy is serving its maximum of \(maximum) connections; try again later."
        case .malformedBody(let error): "Malformed request body: \(error)."
        case .notAProxyRequest(let target):
            "This is a forward proxy: send an absolute-form target (http://host/path) or CONNECT host:port, not '\(target)'."
        case .connectWithBody: "A CONNECT request must not have a body."
        case .connectPortNotAllowed(let port, let allowed):
            "CONNECT to port \(port) is not allowed; allowed ports: \(allowed.map(String.init).joined(separator: ", "))."
        case .privateAddress(let refusal): refusal.description
        case .targetIsProxy(let address): "The target \(address) is this proxy itself."
        case .blocked(let rule): "Blocked by \(rule)."
        case .localResponseForTunnel(let rule):
            "\(rule) answers this host locally, which a CONNECT tunnel cannot carry (its requests are inside TLS)."
        case .ruleTargetNotProxied(let rule, let target):
            "\(rule) redirects to \(target), which this proxy cannot fetch: it forwards plain http only "
                + "(a status in the rule redirects the client instead)."
        case .tooManyRuleRedirects(let rule):
            "The rules redirected the request more than \(RuleRouter.maxRedirects) times (last by \(rule))."
        case .nameNotResolved(let host, let error): "\(host) could not be resolved through the trusted upstreams: \(error)."
        case .noAddressConnected(let host, let failures):
            "No address of \(host) accepted a connection: \(failures.map(\.description).joined(separator: "; "))."
        case .connectTimedOut(let host, let failures):
            "Connecting to \(host) timed out: \(failures.map(\.description).joined(separator: "; "))."
        case .originTimedOut(let address, let timeout):
            "The origin \(address) did not answer within \(timeout.proxySeconds)."
        case .originClosed(let address): "The origin \(address) closed the connection without a response."
        case .badOriginResponse(let address, let error): "The origin \(address) sent a malformed response: \(error)."
        }
    }

    /// The full response: status line, `Content-Type`, `Content-Length`, `Connection: close`, `Retry-After`
    /// for 503 (one second: a connection usually frees soon), `Via`, and the sentence as the body.
    func response(via: String) -> [UInt8] {
        let body = description + "\n"
        let head = "HTTP/1.1 \(status) \(ReasonPhrase.for(status))\r\n"
            + "Content-Type: text/plain; charset=utf-8\r\n"
            + "Content-Length: \(body.utf8.count)\r\n"
            + "Connection: close\r\n"
            + (status == 503 ? "Retry-After: 1\r\n" : "")
            + "Via: 1.1 \(via)\r\n\r\n"
        return Array((head + body).utf8)
    }
}

extension Duration {
    /// `2 s`, `0.25 s`.
    var proxySeconds: String {
        let (seconds, attoseconds) = components
        let millis = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return millis % 1000 == 0 ? "\(millis / 1000) s" : "\(Double(millis) / 1000) s"
    }
}
