/// A DNS server HostPin sends queries to: an IP address and a UDP/TCP port.
///
/// Written `127.0.0.1`, `127.0.0.1:5353`, `::1`, `[::1]` or `[::1]:5353`; the port defaults to 53
/// (RFC 1035 §4.2). Host names are not accepted: resolving the resolver's own name would need a
/// resolver that is trusted already.
public struct Upstream: Sendable, Hashable, CustomStringConvertible, LosslessStringConvertible {
    /// Why a text is not an upstream address.
    public enum ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        case notAnAddress(String)
        case badPort(String)

        public var description: String {
            switch self {
            case .notAnAddress(let text): "'\(text)' is not an IP address (expected IP or IP:PORT, IPv6 as [IP]:PORT)"
            case .badPort(let text): "'\(text)' has no valid port (1-65535)"
            }
        }
    }

    /// The server's address.
    public let address: IPAddress
    /// The server's port, 1-65535.
    public let port: UInt16

    /// Creates an upstream from its parts.
    public init(address: IPAddress, port: UInt16 = 53) {
        self.address = address
        self.port = port
    }

    /// Parses `IP`, `IP:PORT` or `[IPv6]:PORT`; `nil` when the text is neither.
    public init?(_ description: String) {
        guard let parsed = try? Self.parse(description) else { return nil }
        self = parsed
    }

    /// Parses `IP`, `IP:PORT` or `[IPv6]:PORT`, saying why a text is not one.
    ///
    /// - Throws: ``ParseError/notAnAddress(_:)`` or ``ParseError/badPort(_:)``.
    public static func parse(_ text: String) throws(ParseError) -> Upstream {
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
        guard !portText.isEmpty, portText.allSatisfy({ $0.isASCII && $0.isNumber }), let port = UInt16(portText), port > 0 else { throw .badPort(text) }
        return Upstream(address: address, port: port)
    }

    /// `IP:PORT`, IPv6 in brackets: the form c-ares's server list and the CLI take.
    public var description: String { "\(address.uriHost):\(port)" }
}
