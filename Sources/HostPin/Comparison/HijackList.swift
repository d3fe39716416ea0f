/// Addresses known to be handed out by hijacking resolvers (an ISP's search page, a captive portal, a
/// filter's block page), read from a file of HostPin's own format:
///
/// ```
/// # Blank lines and lines starting with # are ignored.
/// # ADDRESS or ADDRESS/PREFIX, then # and what it is (the comment is required).
/// 127.0.0.66        # the lab's hijacker
/// 2001:db8:66::/48  # an example range
/// ```
///
/// Each entry is one IP address or CIDR range (``IPAddressRange``), then `#` and a comment saying whose
/// it is, which the hijack reason quotes. Blanks around the parts, and a CR before the LF, are ignored.
public struct HijackList: Sendable, Hashable {
    /// One listed address or range.
    public struct Entry: Sendable, Hashable, CustomStringConvertible {
        /// The addresses listed.
        public let range: IPAddressRange
        /// What the entry is, as written after `#`.
        public let comment: String
        /// The entry's line in its file, from 1; `nil` for an entry made in code.
        public let line: Int?

        public init(range: IPAddressRange, comment: String, line: Int? = nil) {
            self.range = range
            self.comment = comment
            self.line = line
        }

        /// `127.0.0.66 (line 3: the lab's hijacker)`.
        public var description: String {
            "\(range) (\(line.map { "line \($0): " } ?? "")\(comment))"
        }
    }

    /// The entries, in file order.
    public let entries: [Entry]

    /// The largest list file read: far more than any real list (a line is some 40 bytes).
    public static let fileLimit = 4 << 20

    /// A list of `entries`; empty by default.
    public init(entries: [Entry] = []) {
        self.entries = entries
    }

    /// Reads the list in the file at `path` (at most ``fileLimit`` bytes).
    ///
    /// - Throws: ``HijackListError/file(path:_:)`` when the file cannot be used,
    ///   ``HijackListError/invalid(source:problems:)`` with every bad line.
    public init(contentsOf path: String) throws(HijackListError) {
        let data: [UInt8]
        do throws(FileProblem) {
            data = Array(try BoundedFile.contents(of: path, limit: Self.fileLimit))
        } catch {
            throw .file(path: path, error)
        }
        try self.init(parsing: data, source: path)
    }

    /// Parses a list's text; `source` names it in errors (a path).
    ///
    /// - Throws: ``HijackListError/invalid(source:problems:)`` with every bad line, in order; nothing is
    ///   half-loaded.
    public init(parsing bytes: some Collection<UInt8>, source: String) throws(HijackListError) {
        var entries: [Entry] = []
        var problems: [HijackListProblem] = []
        for (index, line) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            switch Self.parseLine(line, number: index + 1) {
            case .success(let entry?): entries.append(entry)
            case .success(nil): continue
            case .failure(let problem): problems.append(problem)
            }
        }
        guard problems.isEmpty else { throw .invalid(source: source, problems: problems) }
        self.entries = entries
    }

    /// The first entry holding `address`, or `nil`.
    public func entry(containing address: IPAddress) -> Entry? {
        entries.first { $0.range.contains(address) }
    }

    /// The longest line read, in bytes; a longer one is a problem, not read further.
    static let maximumLineLength = 1024

    /// The entry on one line, `nil` for a blank or comment line, or what is wrong with it.
    private static func parseLine(_ bytes: some Collection<UInt8>, number: Int) -> Result<Entry?, HijackListProblem> {
        guard bytes.count <= maximumLineLength else { return .failure(HijackListProblem(line: number, .lineTooLong)) }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            return .failure(HijackListProblem(line: number, .notUTF8))
        }
        let line = trimmed(Substring(text))
        if line.isEmpty || line.hasPrefix("#") { return .success(nil) }
        let hash = line.firstIndex(of: "#")
        let rangeText = trimmed(line[..<(hash ?? line.endIndex)])
        let comment = hash.map { trimmed(line[line.index(after: $0)...]) } ?? ""
        if let blank = rangeText.firstIndex(where: isBlank) {
            return .failure(HijackListProblem(line: number, .extraText(String(rangeText[blank...].drop(while: isBlank)))))
        }
        let range: IPAddressRange
        do throws(IPAddressRange.ParseError) {
            range = try IPAddressRange.parse(String(rangeText))
        } catch {
            return .failure(HijackListProblem(line: number, .badRange(error)))
        }
        guard !comment.isEmpty else { return .failure(HijackListProblem(line: number, .missingComment(range.description))) }
        return .success(Entry(range: range, comment: String(comment), line: number))
    }

    private static func isBlank(_ character: Character) -> Bool {
        character == " " || character == "\t" || character == "\r"
    }

    private static func trimmed(_ text: Substring) -> Substring {
        guard let first = text.firstIndex(where: { !isBlank($0) }), let last = text.lastIndex(where: { !isBlank($0) })
        else { return "" }
        return text[first...last]
    }
}
