/// The chunk extensions after a chunk size (RFC 9112 §7.1.1), checked and then dropped: HostPin gives
/// them no meaning, but a proxy that passes over a line its origin reads differently (an unterminated
/// quoted string that swallows the CRLF) enables request smuggling, so only the grammar is accepted:
///
///     chunk-ext = *( BWS ";" BWS ext-name [ BWS "=" BWS ext-val ] )
///     ext-name  = token
///     ext-val   = token / quoted-string          (RFC 9110 §5.6.2, §5.6.4)
enum ChunkExtensions {
    /// Whether `bytes`, the size line after its hex digits, is a well-formed `chunk-ext`.
    static func areValid(_ bytes: ArraySlice<UInt8>) -> Bool {
        var index = bytes.startIndex
        func skipWhitespace() {
            while index < bytes.endIndex, bytes[index] == HeadSyntax.space || bytes[index] == HeadSyntax.tab { index += 1 }
        }
        /// Moves past a token; false when there is none.
        func token() -> Bool {
            let start = index
            while index < bytes.endIndex, HeadSyntax.isTokenCharacter(bytes[index]) { index += 1 }
            return index > start
        }
        /// Moves past a quoted string (`DQUOTE *( qdtext / quoted-pair ) DQUOTE`); false when it does not end.
        func quotedString() -> Bool {
            index += 1  // the opening DQUOTE
            while index < bytes.endIndex {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""): return true
                case UInt8(ascii: "\\"):
                    guard index < bytes.endIndex, isQuotedPairCharacter(bytes[index]) else { return false }
                    index += 1
                default:
                    guard isQuotedTextCharacter(byte) else { return false }
                }
            }
            return false
        }
        while true {
            skipWhitespace()
            guard index < bytes.endIndex else { return true }
            guard bytes[index] == UInt8(ascii: ";") else { return false }
            index += 1
            skipWhitespace()
            guard token() else { return false }
            skipWhitespace()
            guard index < bytes.endIndex, bytes[index] == UInt8(ascii: "=") else { continue }
            index += 1
            skipWhitespace()
            guard index < bytes.endIndex else { return false }
            guard bytes[index] == UInt8(ascii: "\"") ? quotedString() : token() else { return false }
        }
    }

    /// `qdtext`: HTAB, SP, `!`, `#`-`[`, `]`-`~`, obs-text (RFC 9110 §5.6.4).
    private static func isQuotedTextCharacter(_ byte: UInt8) -> Bool {
        byte == HeadSyntax.tab || byte == HeadSyntax.space || byte == 0x21 || (0x23...0x5B).contains(byte)
            || (0x5D...0x7E).contains(byte) || byte >= 0x80
    }

    /// What may follow a backslash in a quoted string: HTAB, SP, VCHAR, obs-text (RFC 9110 §5.6.4).
    private static func isQuotedPairCharacter(_ byte: UInt8) -> Bool {
        byte == HeadSyntax.tab || byte == HeadSyntax.space || (0x21...0x7E).contains(byte) || byte >= 0x80
    }
}
