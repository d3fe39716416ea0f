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

    public var description: String {
        switch self {
        case .unreadable(let path, let problem): "trust anchor file \(path): \(problem)"
        case .empty(let path): "trust anchor file \(path) is empty"
        case .noAnchorRecord(let path): "trust anchor file \(path) holds no DS or DNSKEY record"
        case .badLine(let path, let line, let text): "trust anchor file \(path), line \(line): not a DS or DNSKEY record: \(text)"
        }
    }
}
