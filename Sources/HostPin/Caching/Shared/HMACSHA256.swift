import COpenSSL

/// HMAC-SHA-256 (RFC 2104 with SHA-256, FIPS 180-4) and a constant-time comparison, both OpenSSL's
/// libcrypto: what authenticates the shared cache's keys and values (``SharedCacheValue``).
enum HMACSHA256 {
    /// The length of a tag, in bytes.
    static let tagLength = 32

    /// The HMAC-SHA-256 of `message` under `key`: 32 bytes.
    static func tag(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
        var tag = [UInt8](repeating: 0, count: tagLength)
        var length: UInt32 = 0
        let made = key.withUnsafeBufferPointer { key in
            message.withUnsafeBufferPointer { message in
                tag.withUnsafeMutableBufferPointer { out in
                    HMAC(EVP_sha256(), key.baseAddress, Int32(key.count), message.baseAddress, message.count,
                         out.baseAddress, &length)
                }
            }
        }
        // HMAC fails only without memory for its context; an all-zero tag then matches no stored value
        // written with a real one.
        return made == nil || length != UInt32(tagLength) ? [UInt8](repeating: 0, count: tagLength) : tag
    }

    /// Whether `a` and `b` hold the same bytes, in a time that depends on their length only
    /// (`CRYPTO_memcmp`): a reader that compares tags must not tell a forger how many leading bytes matched.
    static func equal(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        let a = Array(a), b = Array(b)
        guard a.count == b.count else { return false }
        return a.withUnsafeBytes { a in
            b.withUnsafeBytes { b in CRYPTO_memcmp(a.baseAddress, b.baseAddress, a.count) == 0 }
        }
    }
}
