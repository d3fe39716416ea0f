import Foundation
import HostPin

/// Applies the interception ``Rules`` (``ForwardProxy/Configuration/rules``) to the proxy's requests.
/// Pure: no sockets, no DNS; ``ProxyConnection`` and ``Tunnel`` act on the route.
///
/// An absolute-form (plain HTTP) request gets every action: `block` refuses it (403), `respond` and a
/// `redirect` with a status are answered by the proxy, a transparent `redirect` forwards it to the
/// target (decided by the rules again), `pin` gives the addresses, `header` edits the forwarded head,
/// and `pass` forwards it as if no rule applied: the proxy has no resolver but the trusted one, and
/// never asks the system's, so a passed host is resolved through the trusted upstreams too (unedited).
///
/// A CONNECT tunnel carries TLS, so only what a rule says about the whole host applies: `block`, `pin`,
/// `pass`, and `redirect` to another host (the tunnel goes there, on the target's port when it names
/// one, else the port asked for; the client's TLS still checks the certificate for the name it asked
/// for). `url` and `urlPrefix` rules and `host` rules with a `path` never match a tunnel, `header`
/// edits cannot reach inside it, and a `respond` rule for the host refuses it.
struct RuleRouter: Sendable {
    let rules: Rules

    /// At most this many transparent redirects by rules for one request; then 502. (Loops between rules
    /// are refused when the rules load; this bounds whatever that check cannot see.)
    static let maxRedirects = 16

    /// The route of an absolute-form request for `authority` and `path`.
    func route(_ head: RequestHead, authority: RequestTarget.Authority, path: String) -> Routed<RequestRoute> {
        var target = (authority: authority, path: path)
        guard !rules.isEmpty else {
            return Routed(route: .forward(ForwardTarget(authority: authority, path: path, addresses: .resolve, headerEdits: [])),
                          rules: [])
        }
        // Foundation percent-encodes what RFC 3986 does not allow, so any target the head parser accepts
        // reads as a URL; were one not to, no rule could be checked, and the request must not slip past them.
        guard var url = URL(string: head.targetText) else {
            return Routed(route: .refuse(.malformedRequest(.invalidTarget("the rules cannot read it as a URL"))), rules: [])
        }
        let fields = head.fields.map { (name: $0.name, value: $0.value) }
        var applied: [RuleReference] = []
        var redirects = 0
        while true {
            let decision = rules.decide(PolicyRequest(method: head.method, url: url, headers: fields))
            if let rule = decision.rule { applied.append(rule) }
            let route: RequestRoute
            switch decision {
            case .block(let rule):
                route = .refuse(.blocked(rule))
            case .respond(let response):
                route = .answer(LocalAnswer(status: response.status, headers: response.headers, body: response.body))
            case .redirect(let redirect):
                if let status = redirect.status {
                    route = .answer(LocalAnswer(status: status, headers: [("Location", redirect.target.absoluteString),
                                                                          ("Content-Length", "0")], body: Data()))
                    break
                }
                redirects += 1
                guard redirects <= Self.maxRedirects else {
                    route = .refuse(.tooManyRuleRedirects(redirect.rule))
                    break
                }
                guard let next = Self.absoluteForm(redirect.target) else {
                    route = .refuse(.ruleTargetNotProxied(redirect.rule, target: redirect.target.absoluteString))
                    break
                }
                target = next
                url = redirect.target
                continue
            case .pass:
                route = .forward(ForwardTarget(authority: target.authority, path: target.path, addresses: .resolve,
                                               headerEdits: []))
            case .send(let addresses, let edits):
                route = .forward(ForwardTarget(authority: target.authority, path: target.path, addresses: addresses,
                                               headerEdits: edits))
            }
            return Routed(route: route, rules: applied)
        }
    }

    /// The route of a `CONNECT` tunnel to `authority`.
    func route(connectTo authority: RequestTarget.Authority) -> Routed<TunnelRoute> {
        guard !rules.isEmpty else { return Routed(route: .open(authority, .resolve), rules: []) }
        var target = authority
        var applied: [RuleReference] = []
        var redirects = 0
        while true {
            let decision = rules.decide(PolicyRequest(connectTo: target.host.text, port: Int(target.port)))
            if let rule = decision.rule { applied.append(rule) }
            let route: TunnelRoute
            switch decision {
            case .block(let rule):
                route = .refuse(.blocked(rule))
            case .respond(let response):
                route = .refuse(.localResponseForTunnel(response.rule))
            case .redirect(let redirect):
                // A status cannot reach the client (it does not follow a 3xx to CONNECT): the host moves.
                redirects += 1
                guard redirects <= Self.maxRedirects else {
                    route = .refuse(.tooManyRuleRedirects(redirect.rule))
                    break
                }
                guard let next = Self.authority(of: redirect.target, defaultPort: target.port) else {
                    route = .refuse(.ruleTargetNotProxied(redirect.rule, target: redirect.target.absoluteString))
                    break
                }
                target = next
                continue
            case .pass:
                route = .open(target, .resolve)
            case .send(let addresses, _):
                route = .open(target, addresses)
            }
            return Routed(route: route, rules: applied)
        }
    }

    /// `url` as the proxy forwards it (its authority and origin-form path), read by the proxy's own
    /// request-target parser; `nil` for a URL that is not http.
    static func absoluteForm(_ url: URL) -> (authority: RequestTarget.Authority, path: String)? {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return nil }
        components.fragment = nil
        guard let text = components.string,
              case .absoluteForm(let authority, let path)? = try? RequestTarget.parse(text, method: "GET")
        else { return nil }
        return (authority, path)
    }

    /// The host of `url` with its port, or `defaultPort` when it names none.
    static func authority(of url: URL, defaultPort: UInt16) -> RequestTarget.Authority? {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return nil }
        components.scheme = "http"
        components.port = components.port ?? Int(defaultPort)
        components.percentEncodedPath = ""
        components.percentEncodedQuery = nil
        components.fragment = nil
        guard let text = components.string,
              case .absoluteForm(let authority, _)? = try? RequestTarget.parse(text, method: "GET")
        else { return nil }
        return authority
    }
}
