import Foundation

/// HostPin's interception rules: what to do with a request before any DNS — pin its host to fixed
/// addresses, redirect it, answer it from a local file or inline text, block it, edit its header fields,
/// or pass it to the system untouched. Pure: no URL loading, no sockets, no DNS; the interceptor and the
/// proxy ask ``decide(_:)`` and act.
///
/// Rules come from a JSON file (README.md, "Rules"): `{"rules": [ {"action": "block", "host": …}, … ]}`.
/// Every rule but `header` competes: the FIRST that matches a request decides, in file order. Header
/// rules do not compete: every one that matches a request HostPin sends applies, in file order. IP
/// literals and `localhost` always pass: no rule applies to them.
public struct Rules: Sendable {
    let rules: [Rule]

    /// The largest rules file read: a bigger one is refused without reading it.
    public static let fileLimit = 10 << 20

    /// No rules: every request to a name is pinned through the resolver.
    public init() {
        rules = []
    }

    /// Loads the rules file at `file` (a regular file of at most ``fileLimit`` bytes); a relative
    /// `respond` `file` is read from its folder, at load time (at most 10 MiB each).
    ///
    /// - Throws: ``RulesError`` with every problem found, each at its key path; nothing is half-loaded.
    public init(contentsOf file: URL) throws(RulesError) {
        let data: Data
        do throws(FileProblem) {
            data = try BoundedFile.contents(of: file.path, limit: Self.fileLimit)
        } catch {
            throw .file(path: file.path, error)
        }
        try self.init(json: data, relativeTo: file.deletingLastPathComponent(), source: file.path)
    }

    /// Parses a rules document from `json`.
    ///
    /// - Parameters:
    ///   - folder: Where relative `respond` files are read from.
    ///   - source: How errors name the document, usually its path.
    /// - Throws: ``RulesError`` with every problem found, each at its key path.
    public init(json: Data, relativeTo folder: URL, source: String = "the rules JSON") throws(RulesError) {
        guard json.contains(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) else { throw .empty(source: source) }
        let document: JSONValue
        do {
            document = try JSONDecoder().decode(JSONValue.self, from: json)
        } catch {
            throw .notJSON(source: source, reason: Self.syntaxError(in: json) ?? "\(error)")
        }
        var parser = RulesParser(folder: folder)
        let rules = parser.parseDocument(document)
        let problems = parser.problems + (parser.problems.isEmpty ? RulesAnalysis.problems(in: rules) : [])
        guard problems.isEmpty else { throw .invalid(source: source, problems: problems) }
        self.rules = rules
    }

    /// How many rules there are.
    public var count: Int { rules.count }

    /// Whether there are no rules: every request to a name is sent through the resolver, unedited.
    public var isEmpty: Bool { rules.isEmpty }

    /// Every rule, in order, as errors and decisions name them.
    public var references: [RuleReference] { rules.map(\.reference) }

    /// What to do with `request`. Pure and cheap: safe to call for every request (the interceptor asks
    /// in `canInit`).
    public func decide(_ request: PolicyRequest) -> PolicyDecision {
        let subject: RuleMatcher.Subject
        switch request.target {
        case .url(let url):
            guard let parsed = RequestURL(url) else { return .send(.resolve, headerEdits: []) }
            subject = .url(parsed)
        case .authority(let host, _):
            guard let name = try? HostName.parse(host) else { return .send(.resolve, headerEdits: []) }
            subject = .authority(name)
        }
        if subject.host.literalAddress != nil { return .pass(.addressLiteral) }
        if subject.host.isLocalhost { return .pass(.localhost) }
        var edits: [HeaderEdit] = []
        var decider: Rule?
        for rule in rules where rule.matcher.matches(subject) {
            if case .header(let ruleEdits) = rule.action {
                edits += ruleEdits
            } else if decider == nil {
                decider = rule
            }
        }
        guard let decider else { return .send(.resolve, headerEdits: edits) }
        switch decider.action {
        case .block:
            return .block(decider.reference)
        case .pass:
            return .pass(.rule(decider.reference))
        case .pin(let addresses):
            return .send(.pinned(addresses, decider.reference), headerEdits: edits)
        case .respond(let template):
            return .respond(template.response(to: request, rule: decider.reference))
        case .redirect(let target, let status):
            let url: URL? = switch request.target {
            case .url(let url): target.target(for: url, matchedBy: decider.matcher)
            case .authority(let host, let port): URL(string: "https://\(host):\(port)/").flatMap {
                target.target(for: $0, matchedBy: decider.matcher)
            }
            }
            // A target that cannot be built (it was checked at load time) leaves the request as it is.
            guard let url else { return .send(.resolve, headerEdits: edits) }
            return .redirect(PolicyRedirect(target: url, status: status, rule: decider.reference))
        case .header:
            return .send(.resolve, headerEdits: edits)
        }
    }

    /// Where the JSON is broken, in `JSONSerialization`'s words (`Invalid value around character 11.`):
    /// `JSONDecoder` only says that it is.
    private static func syntaxError(in json: Data) -> String? {
        do {
            _ = try JSONSerialization.jsonObject(with: json, options: [.fragmentsAllowed])
            return nil
        } catch {
            return (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String
        }
    }
}
