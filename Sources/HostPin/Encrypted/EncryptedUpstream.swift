/// A trusted upstream reached over an encrypted transport, which an on-path box that answers every
/// packet to port 53 itself cannot forge: DNS over HTTPS (RFC 8484) or DNS over TLS (RFC 7858).
///
/// Written `https://NAME[:PORT]/PATH` (DoH, port 443 by default, a path such as `/dns-query` required) or
/// `tls://NAME[:PORT]` (DoT, port 853 by default, RFC 7858 §3.1). NAME is a host name, normalised as
/// ``HostName`` does, or an IP literal (IPv6 in brackets). ``description`` prints that form back, with
/// the port only when it is not the default.
///
/// The certificate is always verified against NAME. What else a connection needs travels beside the
/// written form, set by the command line's `--bootstrap`, `--pin` and `--ca-file`
/// (``configured(bootstrap:pins:extraCAFile:)``): where NAME is (``bootstrap``; a host name is never
/// looked up through the system resolver), which keys to accept (``pins``), and an extra CA.
public struct EncryptedUpstream: Sendable, Hashable, CustomStringConvertible, LosslessStringConvertible {
    /// How messages travel.
    public enum Transport: Sendable, Hashable {
        /// DNS over HTTPS (RFC 8484): each query a `POST` of `application/dns-message` to `path`.
        case https(path: String)
        /// DNS over TLS (RFC 7858): length-prefixed messages on one long-lived TLS connection.
        case tls
    }

    /// DoH or DoT, and DoH's path.
    public let transport: Transport
    /// The server's name: what TLS sends as SNI and what its certificate must name.
    public let name: HostName
    /// The TCP port, 1-65535.
    public let port: UInt16
    /// Where ``name`` is: the addresses connected to, in order. Needed when ``name`` is a host name
    /// (an IP literal is its own address).
    public var bootstrap: [IPAddress] = []
    /// Public keys the server's certificate must carry one of, checked in addition to the usual
    /// verification (RFC 7858 §4.2 pin sets; libcurl's `CURLOPT_PINNEDPUBLICKEY`). Empty: no pinning.
    public var pins: [PublicKeyPin] = []
    /// A PEM file of CA certificates trusted in addition to the system's.
    public var extraCAFile: String?

    /// The default port of each transport: 443 for HTTPS (RFC 8484 §8.1 uses the `https` scheme),
    /// 853 for DoT (RFC 7858 §3.1).
    public static func defaultPort(of transport: Transport) -> UInt16 {
        switch transport {
        case .https: 443
        case .tls: 853
        }
    }

    /// Creates an upstream from its parts; `bootstrap`, `pins` and `extraCAFile` start empty.
    public init(transport: Transport, name: HostName, port: UInt16? = nil) {
        self.transport = transport
        self.name = name
        self.port = port ?? Self.defaultPort(of: transport)
    }

    /// Parses `https://NAME[:PORT]/PATH` or `tls://NAME[:PORT]`; `nil` when the text is neither.
    public init?(_ description: String) {
        guard let parsed = try? Self.parse(description) else { return nil }
        self = parsed
    }

    /// Parses `https://NAME[:PORT]/PATH` or `tls://NAME[:PORT]`, saying why a text is not one.
    ///
    /// The scheme is matched without regard to case (RFC 3986 §3.1). The DoH path is kept as written
    /// (it is sent as is); it must be more than `/` and hold no query, fragment, space or control
    /// character. A DoT upstream has no path.
    ///
    /// - Throws: An ``EncryptedUpstreamError`` naming the part that is wrong.
    public static func parse(_ text: String) throws(EncryptedUpstreamError) -> EncryptedUpstream {
        guard let schemeEnd = text.range(of: "://") else { throw .notEncrypted(text) }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        let rest = text[schemeEnd.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let tail = rest[authority.endIndex...]
        let transport: Transport
        switch scheme {
        case "https":
            guard tail.hasPrefix("/"), tail.count > 1 else { throw .missingPath(text) }
            let isBad = { (character: Character) in
                character == "?" || character == "#" || character.isWhitespace
                    || character.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
            }
            if let bad = tail.first(where: isBad) { throw .badPath(text, bad) }
            transport = .https(path: String(tail))
        case "tls":
            guard tail.isEmpty else { throw .unexpectedPath(text) }
            transport = .tls
        default:
            throw .unsupportedScheme(text)
        }
        let (host, port) = try splitAuthority(authority, in: text)
        let name: HostName
        do {
            name = try HostName.parse(host)
        } catch {
            guard case .badName(_, let problem) = error else { throw .badName(text, .empty) }
            throw .badName(text, problem)
        }
        return EncryptedUpstream(transport: transport, name: name, port: port)
    }

    /// `NAME[:PORT]` → the host text (IPv6 without its brackets kept bracketed for ``HostName``) and port.
    private static func splitAuthority(_ authority: Substring, in text: String)
        throws(EncryptedUpstreamError) -> (host: String, port: UInt16?)
    {
        if authority.contains("@") { throw .userInfo(text) }
        var hostPart = authority
        var portPart: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw .badName(text, .badAddressLiteral) }
            hostPart = authority[...close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw .badName(text, .badAddressLiteral) }
                portPart = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            // An IPv6 literal without brackets is ambiguous with a port (RFC 3986 §3.2.2).
            guard !authority[..<colon].contains(":") else { throw .unbracketedIPv6(text) }
            hostPart = authority[..<colon]
            portPart = authority[authority.index(after: colon)...]
        }
        guard !hostPart.isEmpty else { throw .badName(text, .empty) }
        guard let portText = portPart else { return (String(hostPart), nil) }
        guard let port = UInt16(port: portText)
        else { throw .badPort(text) }
        return (String(hostPart), port)
    }

    /// The written form: `https://NAME[:PORT]/PATH` or `tls://NAME[:PORT]`, the port shown only when it
    /// is not the default, IPv6 in brackets.
    public var description: String {
        let host = name.literalAddress?.uriHost ?? name.text
        let port = port == Self.defaultPort(of: transport) ? "" : ":\(port)"
        switch transport {
        case .https(let path): return "https://\(host)\(port)\(path)"
        case .tls: return "tls://\(host)\(port)"
        }
    }

    /// The addresses to connect to: ``name`` itself when it is an IP literal, else ``bootstrap``.
    public var connectAddresses: [IPAddress] {
        if let literal = name.literalAddress { return [literal] }
        return bootstrap
    }

    /// This upstream with the bootstrap addresses and pins given for its NAME (the command line's
    /// repeatable `--bootstrap NAME=IP[,IP...]` and `--pin NAME=sha256//BASE64`) and the `--ca-file`.
    ///
    /// Entries for other names are ignored (they belong to other upstreams); several entries for this
    /// name add up, in order, without repeats.
    ///
    /// - Throws: ``EncryptedUpstreamError/missingBootstrap(_:)`` when NAME is a host name and no
    ///   bootstrap entry names it: HostPin never asks the system resolver where its trusted upstream is.
    public func configured(bootstrap entries: [UpstreamBootstrap], pins pinEntries: [UpstreamPin], extraCAFile: String?)
        throws(EncryptedUpstreamError) -> EncryptedUpstream
    {
        let configured = adding(bootstrap: entries, pins: pinEntries, extraCAFile: extraCAFile)
        if configured.connectAddresses.isEmpty { throw .missingBootstrap(description) }
        return configured
    }

    /// As ``configured(bootstrap:pins:extraCAFile:)``, but an upstream whose NAME is still without an
    /// address afterwards is returned so, for its NAME to be looked up elsewhere (through the plain
    /// upstreams of its list: ``TrustedResolver/Configuration/bootstrappingThroughPlainUpstreams()``).
    public func adding(bootstrap entries: [UpstreamBootstrap], pins pinEntries: [UpstreamPin], extraCAFile: String?)
        -> EncryptedUpstream
    {
        var configured = self
        for entry in entries where entry.name == name {
            for address in entry.addresses where !configured.bootstrap.contains(address) {
                configured.bootstrap.append(address)
            }
        }
        for entry in pinEntries where entry.name == name {
            for pin in entry.pins where !configured.pins.contains(pin) { configured.pins.append(pin) }
        }
        configured.extraCAFile = extraCAFile
        return configured
    }
}
