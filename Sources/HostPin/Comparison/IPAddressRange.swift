/// A block of IP addresses in CIDR notation (RFC 4632 §3.1 for IPv4, RFC 4291 §2.3 for IPv6):
/// `10.0.0.0/8`, `2001:db8::/32`, or one address (`127.0.0.66` is `127.0.0.66/32`).
///
/// Used for `--ordinary` ranges and the entries of a ``HijackList``. An IPv4 range holds IPv4 addresses
/// only and an IPv6 range IPv6 addresses only.
public struct IPAddressRange: Sendable, Hashable, CustomStringConvertible, LosslessStringConvertible {
    /// The first address of the range: every bit after the prefix is zero.
    public let network: IPAddress
    /// The number of leading bits every address of the range shares: 0-32 for IPv4, 0-128 for IPv6.
    public let prefixLength: Int

    /// Why a text is not a range.
    public enum ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The part before `/` is not an IP address.
        case badAddress(String)
        /// The part after `/` is not a whole number from 0 to the family's bit count.
        case badPrefixLength(String, maximum: Int)
        /// Bits are set after the prefix (`10.0.0.1/8`): most likely a typo, so refused rather than
        /// silently widened; `network` is what was probably meant.
        case hostBitsSet(String, network: String)

        public var description: String {
            switch self {
            case .badAddress(let text): "'\(text)' is not an IP address or CIDR range"
            case .badPrefixLength(let text, let maximum):
                "'\(text)' has a prefix length that is not a whole number from 0 to \(maximum)"
            case .hostBitsSet(let text, let network): "'\(text)' has bits set after its prefix length (did you mean \(network)?)"
            }
        }
    }

    /// The range of the one address `address`.
    public init(_ address: IPAddress) {
        network = address
        prefixLength = address.family == .v4 ? 32 : 128
    }

    /// Parses `ADDRESS` or `ADDRESS/PREFIX`; `nil` when the text is neither (see ``parse(_:)``).
    public init?(_ description: String) {
        guard let range = try? Self.parse(description) else { return nil }
        self = range
    }

    /// Parses `ADDRESS` or `ADDRESS/PREFIX`: a dotted quad or RFC 4291 text, then optionally a slash and
    /// a decimal prefix length.
    ///
    /// - Throws: ``ParseError`` naming what is wrong.
    public static func parse(_ text: String) throws(ParseError) -> IPAddressRange {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(String(parts[0])) else { throw .badAddress(text) }
        guard parts.count == 2 else { return IPAddressRange(address) }
        let maximum = address.family == .v4 ? 32 : 128
        guard parts[1].count <= 3, parts[1].allSatisfy({ $0.isASCII && $0.isNumber }), let length = Int(parts[1]),
              length <= maximum
        else { throw .badPrefixLength(text, maximum: maximum) }
        let network = IPAddress(family: address.family, bytes: Self.masked(address.bytes, length: length))
        guard network == address else { throw .hostBitsSet(text, network: "\(network)/\(length)") }
        return IPAddressRange(network: network, prefixLength: length)
    }

    private init(network: IPAddress, prefixLength: Int) {
        self.network = network
        self.prefixLength = prefixLength
    }

    /// Whether `address` is in the range (an address of the other family never is).
    public func contains(_ address: IPAddress) -> Bool {
        address.family == network.family && Self.masked(address.bytes, length: prefixLength) == network.bytes
    }

    /// `10.0.0.0/8`; one address without its prefix length (`127.0.0.66`).
    public var description: String {
        prefixLength == (network.family == .v4 ? 32 : 128) ? network.description : "\(network)/\(prefixLength)"
    }

    /// `bytes` with every bit after the first `length` cleared.
    private static func masked(_ bytes: [UInt8], length: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let kept = min(8, max(0, length - index * 8))
            return kept == 0 ? 0 : byte & UInt8(truncatingIfNeeded: 0xFF << (8 - kept))
        }
    }
}
