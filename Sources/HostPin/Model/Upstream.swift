/// A trusted DNS server HostPin sends queries to: plain DNS at an IP address and port, or an encrypted
/// upstream (DNS over HTTPS or DNS over TLS).
///
/// Written `127.0.0.1`, `127.0.0.1:5353`, `::1`, `[::1]` or `[::1]:5353` for plain DNS over UDP and TCP
/// (the port defaults to 53, RFC 1035 §4.2), `https://NAME[:PORT]/PATH` for DNS over HTTPS (RFC 8484) and
/// `tls://NAME[:PORT]` for DNS over TLS (RFC 7858, port 853 by default); ``description`` prints the form
/// back. A plain upstream is never a host name: resolving the resolver's own name would need a resolver
/// that is trusted already. An encrypted upstream's NAME is what its certificate is checked against; its
/// addresses travel with it (``EncryptedUpstream/bootstrap``).
public struct Upstream: Sendable, Hashable, CustomStringConvertible, LosslessStringConvertible {
    /// Why a text is not an upstream.
    public enum ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// A plain upstream's text that is not an IP address (``parsePlain(_:)``).
        case notAnAddress(String)
        /// Neither an IP address nor `scheme://` (``parse(_:)``).
        case notAnUpstream(String)
        /// A plain upstream's port that is not a number from 1 to 65535.
        case badPort(String)
        /// `scheme://…` that is not a valid encrypted upstream: why.
        case encrypted(EncryptedUpstreamError)

        public var description: String {
            switch self {
            case .notAnAddress(let text): "'\(text)' is not an IP address (expected IP or IP:PORT, IPv6 as [IP]:PORT)"
            case .notAnUpstream(let text):
                "'\(text)' is not an upstream (expected IP or IP:PORT, IPv6 as [IP]:PORT, "
                    + "https://NAME[:PORT]/PATH for DNS over HTTPS or tls://NAME[:PORT] for DNS over TLS)"
            case .badPort(let text): "'\(text)' has no valid port (1-65535)"
            case .encrypted(let error): error.description
            }
        }
    }

    /// How queries reach the upstream.
    public enum Kind: Sendable, Hashable {
        /// Plain DNS over UDP and TCP (RFC 1035 §4.2), carried by c-ares.
        case plain(IPAddress, port: UInt16)
        /// DNS over HTTPS or DNS over TLS, carried by libcurl. Boxed (`indirect`): every `Resolution`
        /// carries its upstream, and the encrypted one's name, path, pins and CA file inline made each
        /// cache hit move some 230 bytes instead of some 120.
        indirect case encrypted(EncryptedUpstream)
    }

    /// Plain or encrypted, and where.
    public let kind: Kind

    /// A plain upstream from its parts.
    public init(address: IPAddress, port: UInt16 = 53) {
        kind = .plain(address, port: port)
    }

    /// An encrypted upstream, with the bootstrap addresses, pins and extra CA it carries.
    public init(_ encrypted: EncryptedUpstream) {
        kind = .encrypted(encrypted)
    }

    /// Parses any upstream form; `nil` when the text is none.
    public init?(_ description: String) {
        guard let parsed = try? Self.parse(description) else { return nil }
        self = parsed
    }

    /// Parses `IP`, `IP:PORT`, `[IPv6]:PORT`, `https://NAME[:PORT]/PATH` or `tls://NAME[:PORT]`, saying why
    /// a text is none of them. An encrypted upstream comes back without bootstrap addresses, pins or extra
    /// CA (``configured(bootstrap:pins:extraCAFile:)`` adds them).
    ///
    /// - Throws: ``ParseError/notAnUpstream(_:)``, ``ParseError/badPort(_:)``, or
    ///   ``ParseError/encrypted(_:)`` for text with `://` that is not a valid encrypted upstream.
    public static func parse(_ text: String) throws(ParseError) -> Upstream {
        if text.contains("://") {
            do throws(EncryptedUpstreamError) {
                return Upstream(try EncryptedUpstream.parse(text))
            } catch {
                throw .encrypted(error)
            }
        }
        do throws(ParseError) {
            return try parsePlain(text)
        } catch {
            guard case .notAnAddress = error else { throw error }
            throw .notAnUpstream(text)
        }
    }

    /// Parses a plain upstream only: `IP`, `IP:PORT` or `[IPv6]:PORT` (for servers that must be plain, such
    /// as the untrusted resolver `hostpin compare --local` checks).
    ///
    /// - Throws: ``ParseError/notAnAddress(_:)`` or ``ParseError/badPort(_:)``.
    public static func parsePlain(_ text: String) throws(ParseError) -> Upstream {
        if let address = IPAddress(text) { return Upstream(address: address) }
        var hostPart: Substring
        var portPart: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw .notAnAddress(text) }
            hostPart = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { throw .notAnAddress(text) }
                portPart = rest.dropFirst()
            }
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw .notAnAddress(text) }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
        }
        guard let address = IPAddress(String(hostPart)), address.family == .v6 || !text.hasPrefix("[")
        else { throw .notAnAddress(text) }
        guard let portText = portPart else { return Upstream(address: address) }
        guard let port = UInt16(port: portText) else { throw .badPort(text) }
        return Upstream(address: address, port: port)
    }

    /// `IP:PORT` (IPv6 in brackets: the form c-ares's server list takes) for a plain upstream;
    /// ``EncryptedUpstream/description`` for an encrypted one.
    public var description: String {
        switch kind {
        case .plain(let address, let port): "\(address.uriHost):\(port)"
        case .encrypted(let encrypted): encrypted.description
        }
    }

    /// The encrypted upstream, or `nil` for a plain one.
    public var encrypted: EncryptedUpstream? {
        if case .encrypted(let encrypted) = kind { return encrypted }
        return nil
    }

    /// Whether this is a plain upstream.
    public var isPlain: Bool { encrypted == nil }

    /// This upstream with the bootstrap addresses and pins given for its NAME and the extra CA file, when
    /// it is encrypted (see ``EncryptedUpstream/configured(bootstrap:pins:extraCAFile:)``); a plain
    /// upstream unchanged.
    ///
    /// - Throws: ``EncryptedUpstreamError/missingBootstrap(_:)`` when an encrypted upstream's NAME is a
    ///   host name that no bootstrap entry names.
    public func configured(bootstrap: [UpstreamBootstrap], pins: [UpstreamPin], extraCAFile: String?)
        throws(EncryptedUpstreamError) -> Upstream
    {
        guard let encrypted else { return self }
        return Upstream(try encrypted.configured(bootstrap: bootstrap, pins: pins, extraCAFile: extraCAFile))
    }
}
