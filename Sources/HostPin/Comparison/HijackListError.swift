/// Why a ``HijackList`` could not be read. Nothing is ever half-loaded: any error refuses the whole file.
public enum HijackListError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file itself cannot be used (missing, not a regular file, too large, unreadable).
    case file(path: String, FileProblem)
    /// Lines with problems: every one, in file order.
    case invalid(source: String, problems: [HijackListProblem])

    /// How many problems ``description`` lists before it only counts the rest.
    static let problemsShown = 10

    /// One sentence (``invalid(source:problems:)`` lists at most ten problems, then counts the rest).
    public var description: String {
        switch self {
        case .file(let path, let problem): "cannot use the hijack list \(path): \(problem)"
        case .invalid(let source, let problems):
            "\(source) has \(problems.count == 1 ? "1 error" : "\(problems.count) errors"): "
                + problems.prefix(Self.problemsShown).map(\.description).joined(separator: "; ")
                + (problems.count > Self.problemsShown ? "; and \(problems.count - Self.problemsShown) more" : "")
        }
    }
}

/// One bad line of a hijack list.
public struct HijackListProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// The line, from 1.
    public let line: Int
    /// What is wrong with it.
    public let reason: Reason

    public init(line: Int, _ reason: Reason) {
        self.line = line
        self.reason = reason
    }

    /// `line 3: '10.0.0.1/8' has bits set after its prefix length (did you mean 10.0.0.0/8?)`.
    public var description: String { "line \(line): \(reason)" }

    /// What is wrong with a line. Closed: each case is a sentence written once, here.
    public enum Reason: Sendable, Hashable, CustomStringConvertible {
        /// The first field is not an address or range.
        case badRange(IPAddressRange.ParseError)
        /// The entry has no comment after `#` saying what it is.
        case missingComment(String)
        /// More than one field before the `#`: the text after the first.
        case extraText(String)
        /// The line is not valid UTF-8.
        case notUTF8
        /// The line is longer than any entry can be (1024 bytes).
        case lineTooLong

        public var description: String {
            switch self {
            case .badRange(let error): error.description
            case .missingComment(let range): "\(range) has no comment: write '# ' and what it is after it"
            case .extraText(let text): "unexpected '\(text)' after the address: a comment starts with '#'"
            case .notUTF8: "the line is not UTF-8 text"
            case .lineTooLong: "the line is longer than \(HijackList.maximumLineLength) bytes"
            }
        }
    }
}
