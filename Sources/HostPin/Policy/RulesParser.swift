import Foundation

/// Turns the JSON of a rules file into ``Rule`` values, collecting EVERY problem with its key path
/// instead of stopping at the first: a rule with problems is left out, and the caller refuses the whole
/// file when any were found.
struct RulesParser {
    /// Where a relative `respond` `file` is read from: the rules file's folder.
    let folder: URL
    private(set) var problems: [RuleProblem] = []

    /// The most a `respond` rule's file may hold: it is read into memory at load time.
    static let responseFileLimit = 10 << 20

    init(folder: URL) {
        self.folder = folder
    }

    /// The rules of a whole document, `{"rules": [...]}` (a `comment` key allowed beside it).
    mutating func parseDocument(_ document: JSONValue) -> [Rule] {
        guard case .object(let fields) = document else {
            problems.append(RuleProblem("(top level)", .wrongType(expected: "an object {\"rules\": [...]}", found: document.kind)))
            return []
        }
        for key in fields.keys.sorted() where !["rules", "comment"].contains(key) {
            problems.append(RuleProblem(key, .unknownKey(allowed: ["rules", "comment"])))
        }
        guard let rules = fields["rules"] else {
            problems.append(RuleProblem("rules", .missing))
            return []
        }
        return parseRules(rules, keyPath: "rules")
    }

    /// The rules of a `rules` array (a config file embeds the same key).
    mutating func parseRules(_ value: JSONValue, keyPath: String) -> [Rule] {
        guard case .array(let items) = value else {
            problems.append(RuleProblem(keyPath, .wrongType(expected: "an array of rules", found: value.kind)))
            return []
        }
        return items.enumerated().compactMap { index, item in parseRule(item, index: index, keyPath: "\(keyPath)[\(index)]") }
    }

    // MARK: One rule

    private static let matcherKeys = ["host", "url", "urlPrefix"]
    private static let commonKeys = ["action", "comment", "host", "path", "url", "urlPrefix"]
    private static let actionKeys: [String: [String]] = [
        "block": [],
        "respond": ["file", "body", "status", "headers", "contentType", "etag"],
        "redirect": ["to", "status"],
        "pin": ["addresses"],
        "header": ["set", "add", "remove"],
        "pass": [],
    ]

    private mutating func parseRule(_ value: JSONValue, index: Int, keyPath: String) -> Rule? {
        guard case .object(let fields) = value else {
            problems.append(RuleProblem(keyPath, .wrongType(expected: "an object", found: value.kind)))
            return nil
        }
        guard let actionName = string(fields, "action", in: keyPath, required: true) else { return nil }
        guard let ownKeys = Self.actionKeys[actionName] else {
            problems.append(RuleProblem("\(keyPath).action", .unknownAction(actionName)))
            return nil
        }
        let before = problems.count
        let allowed = Self.commonKeys + ownKeys
        for key in fields.keys.sorted() where !allowed.contains(key) {
            problems.append(RuleProblem("\(keyPath).\(key)", .unknownKey(allowed: allowed)))
        }
        _ = string(fields, "comment", in: keyPath)
        let matcher = parseMatcher(fields, action: actionName, keyPath: keyPath)
        let action: RuleAction? = switch actionName {
        case "block": .block
        case "respond": parseRespond(fields, keyPath: keyPath)
        case "redirect": parseRedirect(fields, keyPath: keyPath)
        case "pin": parsePin(fields, keyPath: keyPath)
        case "header": parseHeader(fields, keyPath: keyPath)
        default: .pass
        }
        guard problems.count == before, let matcher, let action else { return nil }
        return Rule(reference: RuleReference(index: index, summary: "\(actionName) \(matcher)"), matcher: matcher,
                    action: action)
    }

    private mutating func parseMatcher(_ fields: [String: JSONValue], action: String, keyPath: String) -> RuleMatcher? {
        let given = Self.matcherKeys.filter { fields[$0] != nil }
        guard let key = given.first else {
            problems.append(RuleProblem(fields["path"] == nil ? keyPath : "\(keyPath).path",
                                        fields["path"] == nil ? .noMatcher : .pathNeedsHost))
            return nil
        }
        if given.count > 1 {
            problems.append(RuleProblem(keyPath, .conflictingMatchers(given)))
            return nil
        }
        let hostOnly = action == "pin" || action == "pass"
        if hostOnly, key != "host" {
            problems.append(RuleProblem("\(keyPath).\(key)", .matcherNotAllowed(action: action, matcher: key)))
            return nil
        }
        if fields["path"] != nil, key != "host" {
            problems.append(RuleProblem("\(keyPath).path", .pathNeedsHost))
            return nil
        }
        if hostOnly, fields["path"] != nil {
            problems.append(RuleProblem("\(keyPath).path", .matcherNotAllowed(action: action, matcher: "path")))
            return nil
        }
        guard let text = string(fields, key, in: keyPath) else { return nil }
        do throws(RuleProblem.Reason) {
            switch key {
            case "host":
                let pattern = try HostPattern.parse(text)
                var path: PathGlob?
                if let pathText = string(fields, "path", in: keyPath) {
                    guard pathText.hasPrefix("/") || pathText.hasPrefix("*") else {
                        problems.append(RuleProblem("\(keyPath).path", .badPath(pathText)))
                        return nil
                    }
                    path = PathGlob(pathText)
                }
                return .host(pattern, path: path)
            case "url":
                return .url(try URLPattern.parse(text))
            default:
                return .urlPrefix(try URLPattern.parse(text))
            }
        } catch {
            problems.append(RuleProblem("\(keyPath).\(key)", error))
            return nil
        }
    }

    // MARK: Actions

    private mutating func parseRespond(_ fields: [String: JSONValue], keyPath: String) -> RuleAction? {
        let before = problems.count
        let status = integer(fields, "status", in: keyPath, allowed: 200...599, wording: "200-599") ?? 200
        var headers = headerFields(fields, "headers", in: keyPath, protected: ["content-length", "transfer-encoding"])
        let contentType = string(fields, "contentType", in: keyPath)
        if let contentType, !HeaderEdit.isFieldValue(contentType) {
            problems.append(RuleProblem("\(keyPath).contentType", .badHeaderValue("Content-Type")))
        }
        if contentType != nil, headers.contains(where: { $0.name.lowercased() == "content-type" }) {
            problems.append(RuleProblem(keyPath, .conflictingKeys(["contentType", "headers.Content-Type"])))
        }
        let withEntityTag = boolean(fields, "etag", in: keyPath) ?? false
        let file = string(fields, "file", in: keyPath)
        let text = string(fields, "body", in: keyPath)
        var body = Data()
        if file != nil, text != nil {
            problems.append(RuleProblem(keyPath, .conflictingKeys(["file", "body"])))
        } else if let file {
            let url = file.hasPrefix("/") ? URL(fileURLWithPath: file) : folder.appendingPathComponent(file)
            do throws(FileProblem) {
                body = try BoundedFile.contents(of: url.path, limit: Self.responseFileLimit)
            } catch {
                problems.append(RuleProblem("\(keyPath).file", .file(path: url.path, error)))
            }
        } else if let text {
            body = Data(text.utf8)
        }
        if !body.isEmpty, status == 204 || status == 304 {
            problems.append(RuleProblem("\(keyPath).\(file != nil ? "file" : "body")", .bodyNotAllowed(status: status)))
        }
        guard problems.count == before else { return nil }
        let type = contentType ?? file.map(MediaType.forFile(named:)) ?? (text != nil ? "text/plain; charset=utf-8" : nil)
        if let type, !headers.contains(where: { $0.name.lowercased() == "content-type" }) {
            headers.append(("Content-Type", type))
        }
        return .respond(ResponseTemplate(status: status, headers: headers, body: body, withEntityTag: withEntityTag))
    }

    private mutating func parseRedirect(_ fields: [String: JSONValue], keyPath: String) -> RuleAction? {
        let before = problems.count
        let status = integer(fields, "status", in: keyPath, allowed: [301, 302, 303, 307, 308],
                             wording: "301, 302, 303, 307 or 308, or none for a transparent redirect")
        guard let text = string(fields, "to", in: keyPath, required: true) else { return nil }
        do throws(RuleProblem.Reason) {
            let target = try RedirectTarget.parse(text)
            guard problems.count == before else { return nil }
            return .redirect(target, status: status)
        } catch {
            problems.append(RuleProblem("\(keyPath).to", error))
            return nil
        }
    }

    private mutating func parsePin(_ fields: [String: JSONValue], keyPath: String) -> RuleAction? {
        guard let value = fields["addresses"] else {
            problems.append(RuleProblem("\(keyPath).addresses", .missing))
            return nil
        }
        guard case .array(let items) = value else {
            problems.append(RuleProblem("\(keyPath).addresses", .wrongType(expected: "an array of IP addresses", found: value.kind)))
            return nil
        }
        guard !items.isEmpty else {
            problems.append(RuleProblem("\(keyPath).addresses", .empty))
            return nil
        }
        var addresses: [IPAddress] = []
        for (index, item) in items.enumerated() {
            let path = "\(keyPath).addresses[\(index)]"
            guard case .string(let text) = item else {
                problems.append(RuleProblem(path, .wrongType(expected: "a string", found: item.kind)))
                continue
            }
            guard let address = IPAddress(text) else {
                problems.append(RuleProblem(path, .badAddress(text)))
                continue
            }
            addresses.append(address)
        }
        return addresses.count == items.count ? .pin(addresses) : nil
    }

    private mutating func parseHeader(_ fields: [String: JSONValue], keyPath: String) -> RuleAction? {
        let before = problems.count
        var edits: [HeaderEdit] = []
        if let value = fields["remove"] {
            if case .array(let items) = value {
                for (index, item) in items.enumerated() {
                    let path = "\(keyPath).remove[\(index)]"
                    guard case .string(let name) = item else {
                        problems.append(RuleProblem(path, .wrongType(expected: "a string", found: item.kind)))
                        continue
                    }
                    if checkEditable(name, at: path) { edits.append(.remove(name: name)) }
                }
            } else {
                problems.append(RuleProblem("\(keyPath).remove", .wrongType(expected: "an array of field names", found: value.kind)))
            }
        }
        edits += headerFields(fields, "set", in: keyPath, protected: HeaderEdit.protected).map { HeaderEdit.set(name: $0.name, value: $0.value) }
        edits += headerFields(fields, "add", in: keyPath, protected: HeaderEdit.protected, allowingLists: true)
            .map { HeaderEdit.add(name: $0.name, value: $0.value) }
        guard problems.count == before else { return nil }
        guard !edits.isEmpty else {
            problems.append(RuleProblem(keyPath, .noHeaderEdits))
            return nil
        }
        return .header(edits)
    }

    // MARK: Values

    /// The string at `key`, `nil` when absent (a problem when `required`) or not a string (a problem).
    private mutating func string(_ fields: [String: JSONValue], _ key: String, in keyPath: String,
                                 required: Bool = false) -> String? {
        guard let value = fields[key] else {
            if required { problems.append(RuleProblem("\(keyPath).\(key)", .missing)) }
            return nil
        }
        guard case .string(let text) = value else {
            problems.append(RuleProblem("\(keyPath).\(key)", .wrongType(expected: "a string", found: value.kind)))
            return nil
        }
        return text
    }

    private mutating func boolean(_ fields: [String: JSONValue], _ key: String, in keyPath: String) -> Bool? {
        guard let value = fields[key] else { return nil }
        guard case .bool(let flag) = value else {
            problems.append(RuleProblem("\(keyPath).\(key)", .wrongType(expected: "true or false", found: value.kind)))
            return nil
        }
        return flag
    }

    /// The whole number at `key`, which must be in `allowed` (`wording` says what is).
    private mutating func integer(_ fields: [String: JSONValue], _ key: String, in keyPath: String,
                                  allowed: some Collection<Int>, wording: String) -> Int? {
        guard let value = fields[key] else { return nil }
        guard case .number(let number) = value else {
            problems.append(RuleProblem("\(keyPath).\(key)", .wrongType(expected: "a number", found: value.kind)))
            return nil
        }
        guard number == number.rounded(), abs(number) < 1e9, allowed.contains(Int(number)) else {
            let text = number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
            problems.append(RuleProblem("\(keyPath).\(key)", .badStatus(text, allowed: wording)))
            return nil
        }
        return Int(number)
    }

    /// The fields of an object `{"Name": "value"}` at `key` (with `allowingLists`, a value may be an
    /// array of strings: one field each), sorted by name; each name a token and not `protected`, each
    /// value free of CR, LF and NUL.
    private mutating func headerFields(_ fields: [String: JSONValue], _ key: String, in keyPath: String,
                                       protected: Set<String>, allowingLists: Bool = false) -> [(name: String, value: String)] {
        guard let value = fields[key] else { return [] }
        guard case .object(let entries) = value else {
            problems.append(RuleProblem("\(keyPath).\(key)", .wrongType(expected: "an object of header fields", found: value.kind)))
            return []
        }
        var result: [(name: String, value: String)] = []
        for name in entries.keys.sorted() {
            let path = "\(keyPath).\(key).\(name)"
            let values: [String]
            switch entries[name] {
            case .string(let text)?: values = [text]
            case .array(let items)? where allowingLists && items.allSatisfy({ if case .string = $0 { true } else { false } }):
                values = items.compactMap { if case .string(let text) = $0 { text } else { nil } }
            case let other?:
                problems.append(RuleProblem(path, .wrongType(expected: allowingLists ? "a string or an array of strings" : "a string",
                                                             found: other.kind)))
                continue
            case nil:
                continue
            }
            guard checkEditable(name, at: path, protected: protected) else { continue }
            if !values.allSatisfy(HeaderEdit.isFieldValue) {
                problems.append(RuleProblem(path, .badHeaderValue(name)))
                continue
            }
            result += values.map { (name, $0) }
        }
        return result
    }

    /// Whether `name` is a field name a rule may touch; records the problem when not.
    private mutating func checkEditable(_ name: String, at path: String, protected: Set<String> = HeaderEdit.protected) -> Bool {
        guard HeaderEdit.isFieldName(name) else {
            problems.append(RuleProblem(path, .badHeaderName(name)))
            return false
        }
        guard !protected.contains(name.lowercased()) else {
            problems.append(RuleProblem(path, .headerNotEditable(name)))
            return false
        }
        return true
    }
}
