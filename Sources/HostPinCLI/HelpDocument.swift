import Foundation

/// A `--help` text read back into its parts, so that the manual page and the shell completion are made
/// from the very text `--help` prints and cannot drift from it (as help2man reads a program's `--help`).
///
/// The layout every subcommand's help keeps: blocks separated by blank lines; a block starting with a
/// title (`OPTIONS:`, `EXIT STATUS (curl's numbers):`, `USAGE: text`) opens a section, any other block at
/// column 0 is a paragraph of its own. In the list sections (``listTitles``) an entry starts at column 1
/// or 2 — its term, then its description from a fixed column on — and continues on lines indented to that
/// column; a term too wide for the column stands on its own line.
struct HelpDocument: Sendable, Equatable {
    /// One section, or a paragraph outside any (title `nil`).
    struct Section: Sendable, Equatable {
        /// `OPTIONS`, `EXIT STATUS`; `nil` for an untitled paragraph.
        let title: String?
        /// What follows the title in parentheses (`curl's numbers`), if anything.
        let note: String?
        let blocks: [Block]
    }

    /// A run of lines inside a section.
    enum Block: Sendable, Equatable {
        /// Lines to be read as running text (the help's indentation removed).
        case prose([String])
        /// Lines whose layout matters (examples, aligned output), indentation beyond the section's kept.
        case literal([String])
        /// A list of terms and their descriptions.
        case entries([Entry])
    }

    /// One item of a list section: `--family 4|6|any` and its description, joined into one line.
    struct Entry: Sendable, Equatable {
        let term: String
        let description: String
    }

    /// The sections whose lines are lists of terms.
    static let listTitles: Set<String> = ["ARGUMENTS", "OPTIONS", "COMMANDS", "SUBCOMMANDS", "SIGNALS", "EXIT STATUS"]

    let sections: [Section]

    /// The section titled `title` (its first), if there is one.
    func section(_ title: String) -> Section? { sections.first { $0.title == title } }

    /// The text of a one-line section such as `OVERVIEW: …` or `USAGE: …`, continuation lines joined.
    func inlineText(_ title: String) -> String? {
        guard let section = section(title), case .prose(let lines)? = section.blocks.first else { return nil }
        return lines.joined(separator: " ")
    }

    /// Every entry of the section titled `title`, in order.
    func entries(_ title: String) -> [Entry] {
        (section(title)?.blocks ?? []).flatMap { block -> [Entry] in
            if case .entries(let entries) = block { return entries }
            return []
        }
    }

    /// Reads `help` (a `--help` text).
    init(parsing help: String) {
        var sections: [Section] = []
        var block: [Substring] = []
        func flush() {
            if !block.isEmpty { sections.append(Self.section(of: block)) }
            block = []
        }
        for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.allSatisfy({ $0 == " " }) { flush() } else { block.append(line) }
        }
        flush()
        self.sections = sections
    }

    /// A title line's parts: `EXIT STATUS (curl's numbers): rest` → ("EXIT STATUS", "curl's numbers", "rest").
    static func title(of line: Substring) -> (title: String, note: String?, rest: String)? {
        guard let colon = line.firstIndex(of: ":") else { return nil }
        var head = line[..<colon]
        var note: String?
        if let open = head.firstIndex(of: "("), head.last == ")" {
            note = String(head[head.index(after: open)..<head.index(before: head.endIndex)])
            head = head[..<open]
        }
        let name = head.trimmingSpaces
        guard let first = name.first, first.isUppercase,
              name.allSatisfy({ $0.isUppercase || $0 == " " }) else { return nil }
        return (String(name), note, String(line[line.index(after: colon)...].trimmingSpaces))
    }

    private static func section(of lines: [Substring]) -> Section {
        guard let (title, note, rest) = title(of: lines[0]) else {
            return Section(title: nil, note: nil, blocks: prose(lines))
        }
        let body = Array(lines.dropFirst())
        if !rest.isEmpty {
            return Section(title: title, note: note, blocks: [.prose([rest] + body.map { String($0.trimmingSpaces) })])
        }
        return Section(title: title, note: note, blocks: listTitles.contains(title) ? list(body) : prose(body))
    }

    /// Running text and literal lines: a line at the section's indentation (at most two spaces) without a
    /// gap of three spaces is running text; deeper or aligned lines keep their layout.
    private static func prose(_ lines: [Substring]) -> [Block] {
        var blocks: [Block] = []
        for line in lines {
            let indent = line.prefix(while: { $0 == " " }).count
            let isLiteral = indent > 2 || line.trimmingSpaces.contains("   ")
            let text = isLiteral ? String(line.dropFirst(min(indent, 2))) : String(line.trimmingSpaces)
            switch (blocks.last, isLiteral) {
            case (.prose(let previous)?, false): blocks[blocks.count - 1] = .prose(previous + [text])
            case (.literal(let previous)?, true): blocks[blocks.count - 1] = .literal(previous + [text])
            default: blocks.append(isLiteral ? .literal([text]) : .prose([text]))
            }
        }
        return blocks
    }

    /// The entries of a list section; lines at column 0 within it (a closing remark) are running text.
    private static func list(_ lines: [Substring]) -> [Block] {
        let column = descriptionColumn(lines)
        var blocks: [Block] = []
        var entries: [Entry] = []
        var term = ""
        var description: [String] = []
        func endEntry() {
            if !term.isEmpty { entries.append(Entry(term: term, description: description.joined(separator: " "))) }
            term = ""
            description = []
        }
        func endList() {
            endEntry()
            if !entries.isEmpty { blocks.append(.entries(entries)) }
            entries = []
        }
        for line in lines {
            let indent = line.prefix(while: { $0 == " " }).count
            if indent == 0 {
                endList()
                if case .prose(let previous)? = blocks.last {
                    blocks[blocks.count - 1] = .prose(previous + [String(line)])
                } else {
                    blocks.append(.prose([String(line)]))
                }
            } else if indent > 2 {
                description.append(String(line.trimmingSpaces))
            } else {
                endEntry()
                (term, description) = split(line, column: column)
            }
        }
        endList()
        return blocks
    }

    /// The column descriptions start at: where the continuation lines start (the most frequent
    /// indentation deeper than two), or `nil` when no entry continues.
    private static func descriptionColumn(_ lines: [Substring]) -> Int? {
        var counts: [Int: Int] = [:]
        for line in lines {
            let indent = line.prefix(while: { $0 == " " }).count
            if indent > 2 { counts[indent, default: 0] += 1 }
        }
        return counts.max { ($0.value, -$0.key) < ($1.value, -$1.key) }?.key
    }

    /// An entry's first line as its term and the start of its description: split at `column` when the
    /// character before it is a space, else at the first gap of two spaces; a term alone when neither.
    private static func split(_ line: Substring, column: Int?) -> (String, [String]) {
        let characters = Array(line)
        if let column, characters.count > column, characters[column - 1] == " ", characters[column] != " " {
            let term = String(characters[..<(column - 1)]).trimmingSpaces
            if !term.isEmpty { return (String(term), [String(characters[column...])]) }
        }
        let text = line.trimmingSpaces
        if let gap = text.range(of: "  ") {
            return (String(text[..<gap.lowerBound]), [String(text[gap.upperBound...].trimmingSpaces)])
        }
        return (String(text), [])
    }
}

extension StringProtocol {
    /// The text without spaces at either end.
    var trimmingSpaces: SubSequence {
        guard let first = firstIndex(where: { $0 != " " }), let last = lastIndex(where: { $0 != " " }) else { return self[endIndex...] }
        return self[first...last]
    }
}
