/// What a rule does with the requests it matches.
enum RuleAction: Sendable {
    /// Refuse them.
    case block
    /// Answer them locally.
    case respond(ResponseTemplate)
    /// Send them elsewhere: transparently when `status` is `nil`, else as that 3xx.
    case redirect(RedirectTarget, status: Int?)
    /// Send them to these addresses, without DNS.
    case pin([IPAddress])
    /// Edit their header fields; every matching header rule applies, in file order.
    case header([HeaderEdit])
    /// Leave them to the system, as if HostPin were absent.
    case pass

    /// The `action` value.
    var name: String {
        switch self {
        case .block: "block"
        case .respond: "respond"
        case .redirect: "redirect"
        case .pin: "pin"
        case .header: "header"
        case .pass: "pass"
        }
    }

    /// Whether a request this action takes is sent through HostPin (so header edits can reach it).
    var sends: Bool {
        switch self {
        case .pin, .header: true
        case .block, .respond, .redirect, .pass: false
        }
    }
}

/// One loaded rule.
struct Rule: Sendable {
    let reference: RuleReference
    let matcher: RuleMatcher
    let action: RuleAction
}
