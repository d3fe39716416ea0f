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
    ///
    /// Borrows `text`: an initializer's parameter is consumed by default, so every hit's caller retained
    /// the name's text to pass it and this released it (16% of a hot hit's time, two atomic operations).
    @inline(__always)
    init?(_ text: borrowing String) {
        // A native string's bytes in place (a lookup makes one of these per hit: no copy of the text).
        let inPlace = text.utf8.withContiguousStorageIfAvailable { Self(utf8: $0) }
        guard let name = inPlace ?? Array(text.utf8).withUnsafeBufferPointer({ Self(utf8: $0) }) else { return nil }
        self = name
    }

    @inline(__always)
    private init?(utf8: UnsafeBufferPointer<UInt8>) {
        guard utf8.count <= Self.capacity else { return nil }
        // Word by word, not `copyMemory`: that called `memcpy`, which stores the text byte by byte, and
        // the comparison's 16-byte loads of those bytes then waited for the stores (a store-forwarding
        // stall: 7% of a hot hit).
        let bytes = UnsafeRawBufferPointer(utf8)
        words = (Self.word(bytes, 0), Self.word(bytes, 8), Self.word(bytes, 16), Self.word(bytes, 24))
    }

    /// The 8 bytes of `bytes` from `start` as they lie in memory, NUL-padded past its end.
    @inline(__always)
    private static func word(_ bytes: UnsafeRawBufferPointer, _ start: Int) -> UInt64 {
        let left = bytes.count - start
        if left >= 8 { return bytes.loadUnaligned(fromByteOffset: start, as: UInt64.self) }
        var word: UInt64 = 0
        var index = 0
        while index < left {
            word |= UInt64(bytes[start + index]) << (8 * index)
            index += 1
        }
        // Built as a little-endian value: byte `index` at offset `index` in memory on any host.
        return UInt64(littleEndian: word)
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
