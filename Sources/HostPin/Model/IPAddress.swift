#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An IPv4 or IPv6 address, stored in network byte order.
///
/// Text conversion uses the C library's `inet_pton`/`inet_ntop`, so the accepted forms are
/// the dotted quad for IPv4 (RFC 791; no leading zeros or short forms) and RFC 4291 §2.2 text for IPv6;
/// `description` is the RFC 5952 canonical form.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible, LosslessStringConvertible {
    /// The address family of one address.
    public enum Family: Int, Sendable, Hashable {
        case v4 = 4
        case v6 = 6
    }

    /// `v4` (4 bytes) or `v6` (16 bytes).
    public let family: Family
    // The bytes in network order, inline (a cache holds hundreds of thousands of addresses: no heap
    // array each). An IPv4 address uses the first 4 bytes of `high`.
    private let high: UInt64
    private let low: UInt64

    /// Parses `127.0.0.1` or `::1` (no brackets, no zone index); `nil` for anything else.
    public init?(_ description: String) {
        // inet_pton reads a C string: it would stop at an embedded NUL and accept "127.0.0.1\0evil".
        guard !description.utf8.contains(0) else { return nil }
        var storage: (UInt64, UInt64) = (0, 0)
        if withUnsafeMutableBytes(of: &storage, { inet_pton(AF_INET, description, $0.baseAddress) }) == 1 {
            self.init(family: .v4, storage: storage)
        } else if withUnsafeMutableBytes(of: &storage, { inet_pton(AF_INET6, description, $0.baseAddress) }) == 1 {
            self.init(family: .v6, storage: storage)
        } else {
            return nil
        }
    }

    /// Wraps raw bytes in network order; `bytes.count` must be 4 for `v4` and 16 for `v6`.
    init(family: Family, bytes: some Collection<UInt8>) {
        var storage: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &storage) { raw in
            for (index, byte) in bytes.prefix(16).enumerated() { raw[index] = byte }
        }
        self.init(family: family, storage: storage)
    }

    /// Copies an address as a socket address holds it (`in_addr`, `in6_addr`: network order); `raw.count`
    /// must be 4 for `v4` and 16 for `v6`. Not generic, so that another module's call (one for every
    /// datagram the DNS stub receives) is a copy rather than the generic loop above unspecialised.
    package init(family: Family, raw: UnsafeRawBufferPointer) {
        var storage: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw.prefix(16))) }
        self.init(family: family, storage: storage)
    }

    private init(family: Family, storage: (UInt64, UInt64)) {
        self.family = family
        self.high = storage.0
        self.low = storage.1
    }

    /// The address in network byte order: 4 bytes for `v4`, 16 for `v6`.
    public var bytes: [UInt8] {
        withUnsafeBytes(of: (high, low)) { Array($0.prefix(family == .v4 ? 4 : 16)) }
    }

    /// The RFC 5952 canonical text form: `127.0.0.1`, `::1`.
    public var description: String {
        let af = family == .v4 ? AF_INET : AF_INET6
        // On the stack: two arrays per address showed in a busy proxy's access log (client and pinned).
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(INET6_ADDRSTRLEN)) { text in
            text[0] = 0
            _ = withUnsafeBytes(of: (high, low)) { raw in
                inet_ntop(af, raw.baseAddress, text.baseAddress, socklen_t(text.count))
            }
            return String(cString: text.baseAddress!)
        }
    }

    /// The text form used inside URLs and `host:port` pairs: IPv6 in brackets (RFC 3986 §3.2.2).
    public var uriHost: String {
        family == .v6 ? "[\(description)]" : description
    }

    /// The IPv4 loopback address `127.0.0.1`.
    public static let loopbackV4 = IPAddress(family: .v4, bytes: [127, 0, 0, 1])
    /// The IPv6 loopback address `::1`.
    public static let loopbackV6 = IPAddress(family: .v6, bytes: Array(repeating: 0, count: 15) + [1])
}
