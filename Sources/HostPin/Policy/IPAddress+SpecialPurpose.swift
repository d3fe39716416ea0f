extension IPAddress {
    /// A special-purpose address block from the IANA registries that RFC 6890 set up (plus multicast and
    /// the IPv4 limited broadcast): addresses a public host name should never lead to. A name under an
    /// attacker's control that resolves into one of these is DNS rebinding: the proxy or the interceptor
    /// would carry a remote page's requests to the loopback interface or the local network
    /// (``RebindingGuard``).
    public struct SpecialPurposeBlock: Sendable, Hashable, CustomStringConvertible {
        /// The block in CIDR notation, e.g. `127.0.0.0/8`.
        public let prefix: String
        /// What the block is for, e.g. `loopback`.
        public let name: String
        /// The RFC that reserves it.
        public let rfc: String

        /// `127.0.0.0/8 (loopback, RFC 1122)`.
        public var description: String { "\(prefix) (\(name), \(rfc))" }
    }

    /// The special-purpose block holding this address, or `nil` for an ordinary global unicast address.
    ///
    /// IPv4-mapped (`::ffff:0:0/96`) and NAT64 (`64:ff9b::/96`) IPv6 addresses are judged by the IPv4
    /// address they carry, so `::ffff:127.0.0.1` is loopback.
    public var specialPurposeBlock: SpecialPurposeBlock? {
        switch family {
        case .v4:
            return Self.firstMatch(bytes, in: Self.v4Blocks)
        case .v6:
            let prefix = Array(bytes.prefix(12))
            if prefix == Self.mappedPrefix || prefix == Self.nat64Prefix {
                return IPAddress(family: .v4, bytes: bytes.suffix(4)).specialPurposeBlock
            }
            return Self.firstMatch(bytes, in: Self.v6Blocks)
        }
    }

    /// Whether the address is private, loopback, link-local, or in any other special-purpose block
    /// (see ``specialPurposeBlock``).
    public var isSpecialPurpose: Bool { specialPurposeBlock != nil }

    private typealias Block = (bytes: [UInt8], length: Int, block: SpecialPurposeBlock)

    private static let mappedPrefix: [UInt8] = Array(repeating: 0, count: 10) + [0xFF, 0xFF]
    private static let nat64Prefix: [UInt8] = [0x00, 0x64, 0xFF, 0x9B] + Array(repeating: 0, count: 8)

    private static func block(_ cidr: String, _ name: String, _ rfc: String) -> Block {
        let parts = cidr.split(separator: "/")
        // The table below is fixed text: a typo there is a programming error caught by the unit tests.
        let address = IPAddress(String(parts[0]))!
        return (address.bytes, Int(parts[1])!, SpecialPurposeBlock(prefix: cidr, name: name, rfc: rfc))
    }

    private static let v4Blocks: [Block] = [
        block("0.0.0.0/8", "this network", "RFC 791"),
        block("10.0.0.0/8", "private use", "RFC 1918"),
        block("100.64.0.0/10", "shared address space", "RFC 6598"),
        block("127.0.0.0/8", "loopback", "RFC 1122"),
        block("169.254.0.0/16", "link-local", "RFC 3927"),
        block("172.16.0.0/12", "private use", "RFC 1918"),
        block("192.0.0.0/24", "IETF protocol assignments", "RFC 6890"),
        block("192.0.2.0/24", "documentation (TEST-NET-1)", "RFC 5737"),
        block("192.88.99.0/24", "6to4 relay anycast", "RFC 7526"),
        block("192.168.0.0/16", "private use", "RFC 1918"),
        block("198.18.0.0/15", "benchmarking", "RFC 2544"),
        block("198.51.100.0/24", "documentation (TEST-NET-2)", "RFC 5737"),
        block("203.0.113.0/24", "documentation (TEST-NET-3)", "RFC 5737"),
        block("224.0.0.0/4", "multicast", "RFC 5771"),
        block("255.255.255.255/32", "limited broadcast", "RFC 919"),
        block("240.0.0.0/4", "reserved", "RFC 1112"),
    ]

    private static let v6Blocks: [Block] = [
        block("::/128", "unspecified", "RFC 4291"),
        block("::1/128", "loopback", "RFC 4291"),
        block("100::/64", "discard-only", "RFC 6666"),
        block("2001::/23", "IETF protocol assignments", "RFC 2928"),
        block("2001:db8::/32", "documentation", "RFC 3849"),
        block("2002::/16", "6to4", "RFC 3056"),
        block("fc00::/7", "unique local", "RFC 4193"),
        block("fe80::/10", "link-local", "RFC 4291"),
        block("fec0::/10", "site-local (deprecated)", "RFC 3879"),
        block("ff00::/8", "multicast", "RFC 4291"),
    ]

    private static func firstMatch(_ bytes: [UInt8], in blocks: [Block]) -> SpecialPurposeBlock? {
        blocks.first { matches(bytes, $0.bytes, length: $0.length) }?.block
    }

    private static func matches(_ bytes: [UInt8], _ prefix: [UInt8], length: Int) -> Bool {
        var remaining = length
        var index = 0
        while remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            if bytes[index] & mask != prefix[index] & mask { return false }
            remaining -= bits
            index += 1
        }
        return true
    }
}
