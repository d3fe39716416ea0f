/// The fleet's secret for the shared cache: every instance that shares one Redis holds the same bytes.
///
/// It keys the hash that names each entry (so names are not readable in Redis) and the HMAC-SHA-256 that
/// authenticates each value (``SharedCacheValue``). At least ``minimumLength`` bytes.
public struct SharedCacheSecret: Sendable, Hashable {
    /// The fewest bytes a secret may have: 16 (128 bits).
    public static let minimumLength = 16

    let bytes: [UInt8]

    /// A secret of `bytes`, as read from the secret file (every byte counts, a final newline included).
    ///
    /// - Throws: ``SharedCacheSecretError/tooShort(_:)`` with fewer than ``minimumLength`` bytes.
    public init(_ bytes: [UInt8]) throws(SharedCacheSecretError) {
        guard bytes.count >= Self.minimumLength else { throw .tooShort(bytes.count) }
        self.bytes = bytes
    }
}

/// Why bytes cannot be a ``SharedCacheSecret``.
public enum SharedCacheSecretError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Fewer than ``SharedCacheSecret/minimumLength`` bytes (the count).
    case tooShort(Int)

    public var description: String {
        switch self {
        case .tooShort(let count):
            "the secret has \(count) bytes; it needs at least \(SharedCacheSecret.minimumLength)"
        }
    }
}
