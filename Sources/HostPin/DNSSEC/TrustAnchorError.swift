/// Why a trust-anchor file cannot be used. The CLI maps every case to a usage error (2): validation is
/// never silently turned off by a bad file.
public enum TrustAnchorError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file cannot be opened or read, or is no regular file (a directory: ``FileProblem/notARegularFile``).
    case unreadable(path: String, FileProblem)
    /// The file holds nothing but blank lines and comments, or nothing at all.
    case empty(path: String)
    /// The file holds records, but none is a DS or a DNSKEY.
    case noAnchorRecord(path: String)
    /// Line `line` (from 1) is not a record ldns can read, or is a record of a class other than IN.
    case badLine(path: String, line: Int, text: String)
    /// Every record for `zone` has an algorithm or digest type HostPin does not check.
    case noSupportedAnchor(path: String, zone: String)
    /// Line `line`'s `field` (a DS's key tag, algorithm or digest type, a DNSKEY's flags, protocol or
    /// algorithm) is `value`, more than the field holds (`maximum`): ldns would have kept only its low bits.
    case fieldOutOfRange(path: String, line: Int, field: String, value: String, maximum: Int)

    public var description: String {
        switch self {
        case .unreadable(let path, _), .empty(let path), .noAnchorRecord(let path), .noSupportedAnchor(let path, _):
            "trust anchor file \(path): \(reason)"
        case .badLine(let path, _, _), .fieldOutOfRange(let path, _, _, _, _): "trust anchor file \(path), \(reason)"
        }
    }

    /// What is wrong, without the path (a configuration file's problem names the path itself):
    /// `it does not exist`, `it is empty`, `line 3: not a DS or DNSKEY record: …`.
    public var reason: String {
        switch self {
        case .unreadable(_, let problem): problem.description
        case .empty: "it is empty"
        case .noAnchorRecord: "it holds no DS or DNSKEY record"
        case .noSupportedAnchor(_, let zone): "no record for \(zone) has an algorithm and digest type HostPin checks"
        case .badLine(_, let line, let text): "line \(line): not a DS or DNSKEY record: \(text)"
        case .fieldOutOfRange(_, let line, let field, let value, let maximum):
            "line \(line): the \(field) \(value) is not a number from 0 to \(maximum)"
        }
    }
}
