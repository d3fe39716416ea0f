import Foundation

/// What the rules say about one request: exactly one of these. A caller acts on it — the interceptor
/// fails, answers, fetches the redirect's target (deciding it again) or sends — without the policy ever
/// touching the network.
public enum PolicyDecision: Sendable {
    /// HostPin leaves the request alone: the system resolves the name as if HostPin were absent.
    case pass(PassReason)
    /// Refuse the request: the interceptor fails it with a `URLError` naming the rule; the proxy answers 403.
    case block(RuleReference)
    /// Answer with this response; nothing goes to the network.
    case respond(LocalResponse)
    /// Send the request to another URL: transparently (the caller keeps its own URL and gets the other
    /// resource) or as an HTTP redirect the client follows.
    case redirect(PolicyRedirect)
    /// Send the request to `addresses`, after applying `headerEdits` (in order) to its header fields.
    case send(PinnedAddresses, headerEdits: [HeaderEdit])

    /// The rule that decided, `nil` when none did (a plain pinned request, an IP literal).
    public var rule: RuleReference? {
        switch self {
        case .pass(.rule(let rule)), .block(let rule): rule
        case .pass: nil
        case .respond(let response): response.rule
        case .redirect(let redirect): redirect.rule
        case .send(.pinned(_, let rule), _): rule
        case .send(.resolve, _): nil
        }
    }
}

/// Why a request passes HostPin untouched.
public enum PassReason: Sendable, Hashable {
    /// A `pass` rule names its host.
    case rule(RuleReference)
    /// The host is an IP literal: there is nothing to resolve.
    case addressLiteral
    /// The host is `localhost` or below it (RFC 6761 §6.3): loopback, never asked upstream.
    case localhost
}

/// Where a sent request goes.
public enum PinnedAddresses: Sendable, Hashable {
    /// The addresses the resolver answers for the host (the trusted upstreams, through the cache).
    case resolve
    /// The addresses a `pin` rule gives; no DNS query is made.
    case pinned([IPAddress], RuleReference)
}

/// A redirect decided by a rule.
public struct PolicyRedirect: Sendable, Hashable {
    /// The URL to fetch instead. For a `CONNECT` request, its host and port are the tunnel's new target.
    public let target: URL
    /// The 3xx status to answer with (301, 302, 303, 307 or 308); `nil` for a transparent redirect.
    public let status: Int?
    public let rule: RuleReference

    /// Whether the caller keeps its URL and gets the target's response (no 3xx reaches it).
    public var isTransparent: Bool { status == nil }
}
