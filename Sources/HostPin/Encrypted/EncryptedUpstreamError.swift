/// Why a text is not an encrypted upstream, a bootstrap entry or a pin entry. Each description is a
/// sentence that names the text and what is wrong with it.
public enum EncryptedUpstreamError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No `scheme://`: not an encrypted upstream (plain `IP:PORT` upstreams are ``Upstream``s).
    case notEncrypted(String)
    /// A scheme other than `https` (DoH) or `tls` (DoT).
    case unsupportedScheme(String)
    /// NAME is neither a host name nor an IP literal.
    case badName(String, HostNameProblem)
    /// An IPv6 address without brackets, which cannot be told from a port (RFC 3986 §3.2.2).
    case unbracketedIPv6(String)
    /// The port is not a number from 1 to 65535.
    case badPort(String)
    /// `user@` before NAME: a DNS upstream has no user.
    case userInfo(String)
    /// A DoH upstream without a path (RFC 8484 §3: the URI template names one).
    case missingPath(String)
    /// A DoH path with a query, a fragment, a space or a control character.
    case badPath(String, Character)
    /// A DoT upstream with something after NAME[:PORT].
    case unexpectedPath(String)
    /// NAME is a host name and no `--bootstrap NAME=IP` says where it is.
    case missingBootstrap(String)
    /// A `--bootstrap` or `--pin` entry without `NAME=`.
    case missingName(String)
    /// A `--bootstrap` entry whose NAME is an IP literal, which is its own address.
    case addressAsName(String)
    /// A `--bootstrap` address that is not an IP address.
    case badBootstrapAddress(String, String)
    /// A `--pin` value that is not `sha256//` and the base64 of 32 octets.
    case badPin(String)

    public var description: String {
        switch self {
        case .notEncrypted(let text):
            "'\(text)' is not an encrypted upstream (expected https://NAME[:PORT]/PATH or tls://NAME[:PORT])"
        case .unsupportedScheme(let text):
            "'\(text)' has an unsupported scheme: use https:// for DNS over HTTPS or tls:// for DNS over TLS"
        case .badName(let text, let problem): "'\(text)' does not name a valid server: \(problem)"
        case .unbracketedIPv6(let text): "'\(text)' has an IPv6 address without brackets: write it as [ADDRESS]"
        case .badPort(let text): "'\(text)' has no valid port (1-65535)"
        case .userInfo(let text): "'\(text)' has a user name before the server's name, which a DNS upstream cannot use"
        case .missingPath(let text): "'\(text)' has no path: a DNS over HTTPS upstream needs one, such as /dns-query"
        case .badPath(let text, let character):
            "'\(text)' has \(Self.shown(character)) in its path, which may hold no query, fragment, space or control character"
        case .unexpectedPath(let text): "'\(text)' has a path, but a DNS over TLS upstream is only tls://NAME[:PORT]"
        case .missingBootstrap(let text):
            "'\(text)' names its server by host name, and no --bootstrap NAME=IP says where that server is"
        case .missingName(let text): "'\(text)' has no NAME= before its value"
        case .addressAsName(let text): "'\(text)' names an IP address, which needs no bootstrap address"
        case .badBootstrapAddress(let text, let address): "'\(text)' lists '\(address)', which is not an IP address"
        case .badPin(let text):
            "'\(text)' is not a public key pin: expected sha256// followed by the base64 of a 32-octet SHA-256 digest"
        }
    }

    /// `'?'`, or `U+0020` for a space or control character, which would not show.
    private static func shown(_ character: Character) -> String {
        guard character.isWhitespace || character.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            return "'\(character)'"
        }
        return character.unicodeScalars.map { scalar in
            let hex = String(scalar.value, radix: 16, uppercase: true)
            return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        }.joined(separator: " ")
    }
}
