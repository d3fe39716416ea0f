/// One thing wrong in a rules file, at its key path (`rules[3].to`).
public struct RuleProblem: Sendable, Hashable, CustomStringConvertible {
    /// Where the problem is: `rules`, `rules[3]`, `rules[3].to`, `rules[0].addresses[1]`.
    public let keyPath: String
    /// What is wrong there.
    public let reason: Reason

    public init(_ keyPath: String, _ reason: Reason) {
        self.keyPath = keyPath
        self.reason = reason
    }

    /// `rules[3].to: 'ftp://x/' is not an http or https URL: a redirect must go to one`.
    public var description: String { "\(keyPath): \(reason)" }

    /// What is wrong at a key path. Closed: each case is a sentence written once, here.
    public enum Reason: Error, Sendable, Hashable, CustomStringConvertible {
        /// The value has the wrong JSON type: `expected` is "a string", `found` "a number".
        case wrongType(expected: String, found: String)
        /// A required key is absent.
        case missing
        /// A key the rule does not take; `allowed` lists the keys it does.
        case unknownKey(allowed: [String])
        /// `action` names no action.
        case unknownAction(String)
        /// The rule has none of the matcher keys.
        case noMatcher
        /// The rule has more than one of `host`, `url` and `urlPrefix`.
        case conflictingMatchers([String])
        /// The action cannot use that matcher (`pin` and `pass` match hosts only).
        case matcherNotAllowed(action: String, matcher: String)
        /// `path` without `host`.
        case pathNeedsHost
        /// Two keys that exclude each other (`file` and `body`).
        case conflictingKeys([String])
        /// The text is no host name (invalid IDNA included).
        case badHost(String, HostNameProblem)
        /// A `*` anywhere but as the whole first label, or alone.
        case badWildcard(String)
        /// An IP literal or `localhost`: those always pass, so no rule can apply to them.
        case alwaysPasses(String)
        /// The text is no http or https URL with a host.
        case badURL(String)
        /// A redirect target with a scheme other than http and https.
        case redirectTargetNotHTTP(String)
        /// A port outside 1–65535.
        case portOutOfRange(String)
        /// A path that does not start with `/`.
        case badPath(String)
        /// Not an IPv4 or IPv6 address.
        case badAddress(String)
        /// An empty list or object where at least one entry is needed.
        case empty
        /// A `respond` rule's file cannot be used.
        case file(path: String, FileProblem)
        /// A status outside what the action allows; `allowed` says what is.
        case badStatus(String, allowed: String)
        /// A header field name that is no RFC 9110 token.
        case badHeaderName(String)
        /// A header field value with CR, LF or NUL.
        case badHeaderValue(String)
        /// A header HostPin sets itself (`Host`, `Content-Length`, `Transfer-Encoding`).
        case headerNotEditable(String)
        /// A `header` rule without `set`, `add` or `remove`.
        case noHeaderEdits
        /// A 204 or 304 response with a body.
        case bodyNotAllowed(status: Int)
        /// An earlier rule matches every request this one does, so this one never decides.
        case shadowed(by: RuleReference)
        /// A header rule for requests that an action which sends nothing always takes.
        case neverSent(by: RuleReference)
        /// Redirect rules that send each other's targets back: the rules in order, the first again last.
        case redirectLoop([RuleReference])

        public var description: String {
            switch self {
            case .wrongType(let expected, let found): "must be \(expected), not \(found)"
            case .missing: "is missing"
            case .unknownKey(let allowed): "unknown key (this rule takes " + Self.list(allowed, "and") + ")"
            case .unknownAction(let action):
                "unknown action '\(action)' (the actions are block, respond, redirect, pin, header and pass)"
            case .noMatcher: "the rule matches nothing: give host, url or urlPrefix"
            case .conflictingMatchers(let keys): "give one matcher, not " + Self.list(keys, "and")
            case .matcherNotAllowed(let action, let matcher):
                "a \(action) rule matches by host only, not by \(matcher): DNS knows names, not URLs"
            case .pathNeedsHost: "path narrows a host matcher: give host too"
            case .conflictingKeys(let keys): "give one of " + Self.list(keys, "or") + ", not both"
            case .badHost(let text, let problem): "'\(text)' is not a host name: \(problem)"
            case .badWildcard(let text):
                "'\(text)' has a misplaced '*': a wildcard is a whole first label ('*.example.test') or '*' alone"
            case .alwaysPasses(let text):
                "'\(text)' is an IP literal or localhost, which always pass: no rule applies to them"
            case .badURL(let text): "'\(text)' is not an http or https URL with a host"
            case .redirectTargetNotHTTP(let text): "'\(text)' is not an http or https URL: a redirect must go to one"
            case .portOutOfRange(let text): "'\(text)' has a port out of range (1-65535)"
            case .badPath(let text): "'\(text)' is not a path: it must start with '/'"
            case .badAddress(let text): "'\(text)' is not an IPv4 or IPv6 address"
            case .empty: "must not be empty"
            case .file(let path, let problem): "cannot use file \(path): \(problem)"
            case .badStatus(let text, let allowed): "\(text) is not a status this rule can answer with (\(allowed))"
            case .badHeaderName(let name): "'\(name)' is not a header field name (RFC 9110 §5.1: a token)"
            case .badHeaderValue(let name): "the value of '\(name)' contains CR, LF or NUL"
            case .headerNotEditable(let name): "'\(name)' cannot be set by a rule: HostPin sets it for each request"
            case .noHeaderEdits: "a header rule needs set, add or remove"
            case .bodyNotAllowed(let status): "a \(status) response has no body"
            case .shadowed(let rule): "this rule can never match: \(rule), listed earlier, matches every request it does"
            case .neverSent(let rule):
                "this rule never applies: \(rule) answers every request it matches without sending it"
            case .redirectLoop(let rules): "redirect loop: " + rules.map(\.keyPath).joined(separator: " → ")
            }
        }

        private static func list(_ items: [String], _ conjunction: String) -> String {
            guard items.count > 1 else { return items.first ?? "" }
            return items.dropLast().joined(separator: ", ") + " \(conjunction) " + items[items.count - 1]
        }
    }
}
