/// The hosts a rule's `host` key names: one name, every name below a domain (`*.example.test`, not the
/// apex itself), or every name (`*`). Names are compared after ``HostName/parse(_:)``: lower case,
/// A-labels, no trailing dot. IP literals and `localhost` match no pattern: they always pass.
enum HostPattern: Sendable, Hashable, CustomStringConvertible {
    case exact(HostName)
    case below(HostName)
    case any

    /// Parses `www.example.test`, `*.example.test` or `*`.
    ///
    /// - Throws: ``RuleProblem/Reason`` for an invalid name (IDNA included), a misplaced `*`, or an IP
    ///   literal or `localhost`.
    static func parse(_ text: String) throws(RuleProblem.Reason) -> HostPattern {
        if text == "*" { return .any }
        let below = text.hasPrefix("*.")
        let nameText = below ? String(text.dropFirst(2)) : text
        if nameText.contains("*") { throw .badWildcard(text) }
        let name: HostName
        do throws(ResolutionError) {
            name = try HostName.parse(nameText)
        } catch {
            guard case .badName(_, let problem) = error else { throw .badHost(text, .empty) }
            throw .badHost(text, problem)
        }
        if name.literalAddress != nil || name.isLocalhost {
            throw .alwaysPasses(text)
        }
        return below ? .below(name) : .exact(name)
    }

    /// Whether `name` (a name, not an IP literal) is one of the pattern's hosts.
    func matches(_ name: HostName) -> Bool {
        switch self {
        case .exact(let host): name == host
        case .below(let domain): name.text.count > domain.text.count && name.text.hasSuffix("." + domain.text)
        case .any: true
        }
    }

    /// Whether every host `other` names is one of this pattern's.
    func covers(_ other: HostPattern) -> Bool {
        switch (self, other) {
        case (.any, _): true
        case (_, .any): false
        case (.exact(let host), .exact(let name)): host == name
        case (.exact, .below): false
        case (.below, .exact(let name)): matches(name)
        case (.below(let domain), .below(let inner)): inner == domain || matches(inner)
        }
    }

    /// `www.example.test`, `*.example.test`, `*`.
    var description: String {
        switch self {
        case .exact(let host): host.text
        case .below(let domain): "*." + domain.text
        case .any: "*"
        }
    }
}
