/// Why a chunked body is malformed (RFC 9112 §7.1). Closed; a client's bad body ends its connection
/// (with 400 when no response has started), an origin's ends the relay.
public enum ChunkError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The chunk-size line is not hex digits followed by optional chunk extensions. The line.
    case invalidChunkSize(String)
    /// The chunk extensions after the size are not `;` name [`=` token or quoted string], e.g. a quoted
    /// string without its closing DQUOTE (RFC 9112 §7.1.1). The line.
    case invalidChunkExtension(String)
    /// The chunk-size has more than 15 hex digits: too large to be held (RFC 9112 §7.1 asks a
    /// recipient to anticipate large numbers and refuse what would overflow). The digits.
    case chunkSizeTooLarge(String)
    /// A chunk-size line (extensions included) is longer than the limit.
    case sizeLineTooLong(limit: Int)
    /// The chunk's data is not followed by CRLF.
    case missingCRLFAfterData
    /// A CR not followed by LF in a size or trailer line.
    case bareCR
    /// An LF not preceded by CR in a size or trailer line.
    case bareLF
    /// The trailer section is larger than the limit.
    case trailerTooLarge(limit: Int)
    /// A trailer field line is malformed.
    case invalidTrailer(HeadError)
    /// The stream ended before the last chunk.
    case truncated

    public var description: String {
        switch self {
        case .invalidChunkSize(let line): "chunk size line '\(line)' is not hex digits with optional extensions"
        case .invalidChunkExtension(let line): "chunk extension in size line '\(line)' is not ';' name ['=' token or quoted string]"
        case .chunkSizeTooLarge(let digits): "chunk size '\(digits)' is too large (more than 15 hex digits)"
        case .sizeLineTooLong(let limit): "a chunk size line is longer than \(limit) bytes"
        case .missingCRLFAfterData: "a chunk's data is not followed by CRLF"
        case .bareCR: "a CR in the chunked framing is not followed by LF"
        case .bareLF: "a line of the chunked framing ends in a bare LF"
        case .trailerTooLarge(let limit): "the trailer section is larger than \(limit) bytes"
        case .invalidTrailer(let error): "a trailer field is invalid: \(error)"
        case .truncated: "the chunked body ended before its last chunk"
        }
    }
}
