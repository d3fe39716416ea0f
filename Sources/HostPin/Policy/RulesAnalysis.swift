import Foundation

/// Load-time checks across rules: a rule that can never decide because an earlier one matches every
/// request it does, a header rule whose requests an action that sends nothing always takes, and
/// redirect rules that send a request around in a loop.
enum RulesAnalysis {
    static func problems(in rules: [Rule]) -> [RuleProblem] {
        shadowed(rules) + neverSent(rules) + loops(rules)
    }

    /// Rules that decide (all but `header`) covered by an earlier one: first match wins, so they never do.
    private static func shadowed(_ rules: [Rule]) -> [RuleProblem] {
        var problems: [RuleProblem] = []
        let deciding = rules.filter { !$0.isHeader }
        for (position, rule) in deciding.enumerated() {
            if let earlier = deciding[..<position].first(where: { $0.matcher.covers(rule.matcher) }) {
                problems.append(RuleProblem(rule.reference.keyPath, .shadowed(by: earlier.reference)))
            }
        }
        return problems
    }

    /// Header rules covered by a block, respond, redirect or pass rule that no earlier pin rule can
    /// pre-empt: the requests they match are never sent through HostPin.
    private static func neverSent(_ rules: [Rule]) -> [RuleProblem] {
        var problems: [RuleProblem] = []
        let deciding = rules.filter { !$0.isHeader }
        for rule in rules where rule.isHeader {
            guard let position = deciding.firstIndex(where: { $0.matcher.covers(rule.matcher) }),
                  !deciding[position].action.sends,
                  !deciding[..<position].contains(where: { $0.action.sends && $0.matcher.mayOverlap(rule.matcher) })
            else { continue }
            problems.append(RuleProblem(rule.reference.keyPath, .neverSent(by: deciding[position].reference)))
        }
        return problems
    }

    /// Cycles of redirect rules, each reported once, at the `to` of the rule where it was entered: each
    /// redirect rule's example URL is redirected, and the target decided again, until a rule repeats or
    /// something other than a redirect decides.
    private static func loops(_ rules: [Rule]) -> [RuleProblem] {
        var problems: [RuleProblem] = []
        var reported: Set<Set<Int>> = []
        for rule in rules {
            guard case .redirect = rule.action, let example = rule.matcher.example else { continue }
            var visited: [Rule] = []
            var url = example
            var current: Rule? = rule
            while let step = current, case .redirect(let target, _) = step.action {
                if let start = visited.firstIndex(where: { $0.reference == step.reference }) {
                    let cycle = Array(visited[start...])
                    if reported.insert(Set(cycle.map(\.reference.index))).inserted {
                        problems.append(RuleProblem("\(cycle[0].reference.keyPath).to",
                                                    .redirectLoop(cycle.map(\.reference) + [cycle[0].reference])))
                    }
                    break
                }
                visited.append(step)
                guard let next = target.target(for: url, matchedBy: step.matcher), let subject = RequestURL(next) else { break }
                url = next
                current = rules.first { !$0.isHeader && $0.matcher.matches(.url(subject)) }
            }
        }
        return problems
    }
}

extension Rule {
    var isHeader: Bool {
        if case .header = action { return true }
        return false
    }
}

extension RuleMatcher {
    /// Whether some request could match both: their host sets overlap (for these patterns, one covers
    /// the other). Paths are not compared, so this may say yes where the answer is no.
    func mayOverlap(_ other: RuleMatcher) -> Bool {
        switch (hostPattern, other.hostPattern) {
        case (let mine?, let theirs?): mine.covers(theirs) || theirs.covers(mine)
        default: false
        }
    }

    /// The hosts the matcher is limited to, as a host pattern.
    private var hostPattern: HostPattern? {
        switch self {
        case .host(let pattern, _): pattern
        case .url(let pattern), .urlPrefix(let pattern): .exact(pattern.origin.host)
        }
    }
}
