/// An option as an OPTIONS entry of a `--help` text names it: `-o, --output FILE` is the names `-o` and
/// `--output` taking a FILE; `--watch-local [IP:PORT]` takes a value it may go without.
struct HelpOption: Sendable, Equatable {
    /// Every spelling, short ones included: `-o`, `--output`.
    let names: [String]
    /// What the value stands for (`FILE`, `4|6|any`, `[IP:PORT]`); `nil` for a flag.
    let placeholder: String?

    /// Reads an entry's term; `nil` when it does not start with `-` (an argument, a command).
    init?(term: String) {
        guard term.hasPrefix("-") else { return nil }
        var names: [String] = []
        var rest = Substring(term)
        while rest.hasPrefix("-") {
            let word = rest.prefix { $0 != " " }
            names.append(String(word.hasSuffix(",") ? word.dropLast() : word))
            rest = rest.dropFirst(word.count).drop { $0 == " " }
        }
        self.names = names
        self.placeholder = rest.isEmpty ? nil : String(rest)
    }

    /// Whether the value may be left out (`--watch-local [IP:PORT]`).
    var valueIsOptional: Bool { placeholder?.hasPrefix("[") == true }

    /// Whether the value names a file or a socket path, for the shell to complete.
    var valueIsPath: Bool {
        guard let placeholder else { return false }
        return placeholder.contains("FILE") || placeholder.contains("PATH")
    }

    /// The choices a placeholder spells out itself (`4|6|any`, `text|json`): words of lower-case
    /// letters and digits between bars; `nil` for anything else (`IP:PORT|URL`, `FILE|-`).
    var inlineChoices: [String]? {
        guard let placeholder, placeholder.contains("|") else { return nil }
        let words = placeholder.split(separator: "|").map(String.init)
        let isWord = { (word: String) in !word.isEmpty && word.allSatisfy { $0.isLowercase || $0.isNumber } }
        return words.allSatisfy(isWord) ? words : nil
    }
}
