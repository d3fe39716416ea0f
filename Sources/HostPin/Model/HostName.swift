import CIDN2

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A host name in the one form HostPin caches and queries: lower-case A-labels, no trailing dot,
/// or an IP literal.
///
/// Parsing (``parse(_:)``) applies, in order:
/// 1. One trailing dot is dropped (`www.example.test.` is absolute, RFC 1034 §3.1).
/// 2. IP literals are kept as addresses: `127.0.0.1`, `::1` and `[::1]` (RFC 3986 §3.2.2).
/// 3. Spaces and control characters are rejected.
/// 4. ASCII is lower-cased; any other name is converted to A-labels with libidn2 under UTS #46
///    non-transitional processing (RFC 5891, UTS #46 §4), as curl does: `bücher.example.test`
///    becomes `xn--bcher-kva.example.test`.
/// 5. Each label must hold 1-63 octets of letters, digits, `-` or `_`, not begin or end with `-`, the
///    last label must not be numeric (so `010.0.0.1` is neither a name nor an address), and the whole
///    name at most 253 octets (RFC 1035 §2.3.4, RFC 1123 §2.1).
public struct HostName: Sendable, Hashable, CustomStringConvertible, Comparable {
    /// The normalised text: A-labels in lower case without a trailing dot, or an IP address's
    /// canonical text (IPv6 without brackets).
    public let text: String
    /// The address when the name is an IP literal.
    public let literalAddress: IPAddress?
    /// Whether the name is `localhost` or ends in `.localhost`, which RFC 6761 §6.3 reserves for
    /// loopback and which is never sent upstream. Decided once, at parse time: every resolve asks.
    public let isLocalhost: Bool
    /// Whether the name is in a special-use zone of ``SpecialUseName``'s table, which HostPin may answer
    /// itself. Decided once, at parse time, like ``isLocalhost``: a cache hit then costs an ordinary name
    /// no look at the table.
    package let isSpecialUse: Bool
    /// `text`'s hash, computed once: the cache hashes names on every lookup.
    let textHash: Int

    /// A name already normalised by ``parse(_:)`` (the cache keeps only its text), not an IP literal.
    init(normalized text: String) {
        self.init(text: text, literalAddress: nil)
    }

    private init(text: String, literalAddress: IPAddress?) {
        self.text = text
        self.literalAddress = literalAddress
        self.isLocalhost = literalAddress == nil && (text == "localhost" || text.hasSuffix(".localhost"))
        self.isSpecialUse = literalAddress == nil && SpecialUseName.entry(containing: text) != nil
        self.textHash = text.hashValue
    }

    /// Whether a resolution of the name may be answered without a cache or an upstream: an IP literal,
    /// `localhost`, a special-use name (``ResolutionOutcome``'s `literal(for:family:routing:)` decides).
    package var mayBeAnsweredLocally: Bool { literalAddress != nil || isLocalhost || isSpecialUse }

    // Equality and hashing by `text` alone: the other fields follow from it.
    public static func == (lhs: HostName, rhs: HostName) -> Bool {
        lhs.textHash == rhs.textHash && lhs.text == rhs.text
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(textHash)
    }

    /// Normalises `input` (see the type's documentation).
    ///
    /// - Parameter input: A host name in any case, Unicode or A-labels, optionally absolute
    ///   (trailing dot), or an IP literal (IPv6 optionally in brackets).
    /// - Throws: ``ResolutionError/badName(_:_:)`` naming the ``HostNameProblem``.
    public static func parse(_ input: String) throws(ResolutionError) -> HostName {
        if let plain = plainASCII(input) { return HostName(text: plain, literalAddress: nil) }
        var name = Substring(input)
        if name.hasSuffix(".") { name = name.dropLast() }
        if name.isEmpty { throw .badName(input, .empty) }
        if let bad = name.unicodeScalars.first(where: { $0.value <= 0x20 || (0x7F...0x9F).contains($0.value) }) {
            throw .badName(input, .invalidCharacter(Character(bad)))
        }
        if name.hasPrefix("[") {
            guard name.hasSuffix("]"), let v6 = IPAddress(String(name.dropFirst().dropLast())), v6.family == .v6
            else { throw .badName(input, .badAddressLiteral) }
            return HostName(text: v6.description, literalAddress: v6)
        }
        if let address = IPAddress(String(name)) {
            return HostName(text: address.description, literalAddress: address)
        }
        var ascii = name.allSatisfy(\.isASCII) ? name.lowercased() : try toALabels(String(name), input: input)
        // A trailing ideographic or fullwidth full stop becomes "." only in the IDNA mapping.
        if ascii.hasSuffix("."), !input.hasSuffix(".") { ascii.removeLast() }
        try validate(ascii, input: input)
        return HostName(text: ascii, literalAddress: nil)
    }

    /// The normalised form of an everyday ASCII name in one pass over its bytes, or `nil` when the
    /// name needs the full path (an error to explain, an IP literal, Unicode, an odd character):
    /// letters, digits, `-` and `_` in labels of 1-63 octets, at most 253 octets, no edge hyphen, a
    /// last label with a letter, optionally one trailing dot.
    private static func plainASCII(_ input: String) -> String? {
        var utf8 = Array(input.utf8)
        if utf8.last == UInt8(ascii: ".") { utf8.removeLast() }
        guard !utf8.isEmpty, utf8.count <= 253 else { return nil }
        var labelStart = 0
        var lastLabelHasLetter = false
        var changed = utf8.count != input.utf8.count
        for index in 0...utf8.count {
            let byte = index < utf8.count ? utf8[index] : UInt8(ascii: ".")
            switch byte {
            case UInt8(ascii: "."):
                let length = index - labelStart
                guard length > 0, length <= 63, utf8[labelStart] != UInt8(ascii: "-"),
                      utf8[index - 1] != UInt8(ascii: "-") else { return nil }
                if index < utf8.count {
                    labelStart = index + 1
                    lastLabelHasLetter = false
                }
            case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                utf8[index] = byte | 0x20
                changed = true
                lastLabelHasLetter = true
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "_"):
                lastLabelHasLetter = true
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"):
                break
            default:
                return nil
            }
        }
        // A last label without a letter may be an IP literal, and `0x…` a hex address: the full path
        // accepts or explains those.
        let hex = utf8.count - labelStart >= 2 && utf8[labelStart] == UInt8(ascii: "0")
            && utf8[labelStart + 1] == UInt8(ascii: "x")
        guard lastLabelHasLetter, !hex else { return nil }
        return changed ? String(decoding: utf8, as: UTF8.self) : input
    }

    /// The normalised text.
    public var description: String { text }

    public static func < (lhs: HostName, rhs: HostName) -> Bool { lhs.text < rhs.text }

    private static func toALabels(_ name: String, input: String) throws(ResolutionError) -> String {
        var output: UnsafeMutablePointer<CChar>?
        let status = idn2_to_ascii_8z(name, &output, HOSTPIN_IDN2_NONTRANSITIONAL)
        guard status == HOSTPIN_IDN2_OK, let output else {
            let reason = String(cString: idn2_strerror(status))
            throw .badName(input, .idna(reason))
        }
        defer { idn2_free(output) }
        return String(cString: output).lowercased()
    }

    private static func validate(_ name: String, input: String) throws(ResolutionError) {
        if name.utf8.count > 253 { throw .badName(input, .nameTooLong(octets: name.utf8.count)) }
        for label in name.split(separator: ".", omittingEmptySubsequences: false) {
            if label.isEmpty { throw .badName(input, .emptyLabel) }
            if label.utf8.count > 63 { throw .badName(input, .labelTooLong(String(label))) }
            if label.hasPrefix("-") || label.hasSuffix("-") { throw .badName(input, .hyphenAtLabelEdge(String(label))) }
            if let bad = label.first(where: { !($0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_")) }) {
                throw .badName(input, .invalidCharacter(bad))
            }
        }
        // An all-numeric last label is no host name (RFC 1123 §2.1, RFC 3696 §2) but an address in a form
        // inet_pton refuses and resolvers read their own way: `010.0.0.1` is 10.0.0.1 to c-ares, 8.0.0.1 to curl.
        if let last = name.split(separator: ".").last, last.allSatisfy(\.isNumber) || last.hasPrefix("0x") {
            throw .badName(input, .numericTopLabel(String(last)))
        }
    }
}

/// Why a text is not a host name.
public enum HostNameProblem: Sendable, Hashable, CustomStringConvertible {
    case empty
    case emptyLabel
    case labelTooLong(String)
    case hyphenAtLabelEdge(String)
    case numericTopLabel(String)
    case nameTooLong(octets: Int)
    case invalidCharacter(Character)
    case badAddressLiteral
    case idna(String)

    public var description: String {
        switch self {
        case .empty: "the name is empty"
        case .emptyLabel: "it has an empty label (two dots in a row, or a leading dot)"
        case .labelTooLong(let label): "label '\(label)' is longer than 63 octets"
        case .hyphenAtLabelEdge(let label): "label '\(label)' begins or ends with a hyphen"
        case .numericTopLabel(let label):
            "its last label '\(label)' is numeric: an IP address must be a dotted quad or IPv6, a name needs a letter there"
        case .nameTooLong(let octets): "it is \(octets) octets long, more than 253"
        case .invalidCharacter(let character):
            "it contains \(character.unicodeScalars.map(Self.codePoint).joined()), which is not allowed in a host name"
        case .badAddressLiteral: "the bracketed part is not an IPv6 address"
        case .idna(let reason): "it is not a valid internationalised name (\(reason))"
        }
    }

    private static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
