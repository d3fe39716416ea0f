import Foundation

/// A path pattern in which `*` stands for any run of characters, `/` included: `/img/*.png`,
/// `/style.css?v=*`. Without `*` it matches its own text only. Compared with the percent-encoded path
/// (and query) as the URL carries them, case-sensitively (RFC 3986 §6.2.2.1: paths are case-sensitive).
struct PathGlob: Sendable, Hashable, CustomStringConvertible {
    /// The text between the stars: `["/img/", ".png"]` for `/img/*.png`.
    private let pieces: [Substring]
    let description: String

    init(_ text: String) {
        description = text
        pieces = text.split(separator: "*", omittingEmptySubsequences: false)
    }

    /// Whether the pattern has a `*`.
    var hasWildcard: Bool { pieces.count > 1 }

    /// The text before the first `*`: every match starts with it.
    var literalPrefix: Substring { pieces[0] }

    /// Whether `text` matches: the first piece at the start, the last at the end, the others in order
    /// between (the earliest occurrence of each is the right choice when `*` matches anything).
    func matches(_ text: Substring) -> Bool {
        guard hasWildcard else { return text == pieces[0] }
        guard text.hasPrefix(pieces[0]) else { return false }
        var rest = text.dropFirst(pieces[0].count)
        let last = pieces[pieces.count - 1]
        for piece in pieces.dropFirst().dropLast() where !piece.isEmpty {
            guard let range = rest.range(of: piece) else { return false }
            rest = rest[range.upperBound...]
        }
        return rest.count >= last.count && rest.hasSuffix(last)
    }

    /// Any text the pattern matches, for load-time checks: each `*` taken as `x`.
    var example: String { pieces.joined(separator: "x") }
}
