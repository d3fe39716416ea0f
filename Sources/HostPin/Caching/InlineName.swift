/// A normalised host name's text of at most ``capacity`` bytes, held inline and NUL-padded (a
/// normalised name holds no NUL, and is never empty: all zeros is no name).
///
/// A ``CacheShard`` entry keeps its name this way rather than as a `String`: a probe compares four words
/// in the entry it already reads instead of following a pointer to the text's storage (one cache miss
/// more for a random key), and a name of 16 to 32 bytes needs no heap block of its own (some 64 bytes
/// with the allocator's overhead; Swift keeps names of up to 15 bytes inline in the `String` already).
struct InlineName: Equatable {
    /// The longest name held inline, bytes; a longer one is kept as a `String` beside the entry.
    static let capacity = 32

    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    /// No name: a free entry's, or one whose name is too long to be held inline.
    static let none = InlineName()

    private init() {}

    /// `text` inline, or `nil` when it is longer than ``capacity`` bytes.
    init?(_ text: String) {
        // A native string's bytes in place (a lookup makes one of these per hit: no copy of the text).
        let inPlace = text.utf8.withContiguousStorageIfAvailable { Self(utf8: $0) }
        guard let name = inPlace ?? Array(text.utf8).withUnsafeBufferPointer({ Self(utf8: $0) }) else { return nil }
        self = name
    }

    private init?(utf8: UnsafeBufferPointer<UInt8>) {
        guard utf8.count <= Self.capacity else { return nil }
        withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: UnsafeRawBufferPointer(utf8)) }
    }

    /// Whether this is no name (``none``).
    var isNone: Bool { words.0 == 0 }

    /// The text (empty for ``none``).
    var text: String {
        withUnsafeBytes(of: words) { bytes in String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self) }
    }

    static func == (lhs: InlineName, rhs: InlineName) -> Bool {
        // Not the synthesised comparison (tuples are not Equatable): four words, no early branch per byte.
        (lhs.words.0 ^ rhs.words.0) | (lhs.words.1 ^ rhs.words.1) | (lhs.words.2 ^ rhs.words.2)
            | (lhs.words.3 ^ rhs.words.3) == 0
    }
}
