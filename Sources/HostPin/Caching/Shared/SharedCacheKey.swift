/// The Redis key of a name's entry in the shared cache: `hostpin:` and the hex HMAC-SHA-256, under the
/// fleet's secret, of the name, the query type and the class (as Unbound's cachedb hashes its keys), so
/// that what is cached cannot be read back into names without the secret.
public struct SharedCacheKey: Sendable, Hashable, CustomStringConvertible {
    /// The key as Redis stores it.
    public let text: String

    /// The key for `name` asked for `family`: type A (1) for `v4`, AAAA (28) for `v6`, and 255 for `any`
    /// (HostPin's A-and-AAAA answer; RFC 8482's ANY is never asked), class IN (1).
    public init(name: HostName, family: AddressFamily, secret: SharedCacheSecret) {
        let type: UInt16 = switch family {
        case .v4: 1
        case .v6: 28
        case .any: 255
        }
        var message = Array("hostpin-key\0".utf8) + Array(name.text.utf8)
        message += [0, UInt8(type >> 8), UInt8(type & 0xFF), 0, 1]
        let tag = HMACSHA256.tag(message, key: secret.bytes)
        text = "hostpin:" + tag.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }

    public var description: String { text }
}

extension String {
    /// The string with `0`s in front up to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
