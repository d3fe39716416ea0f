import HostPin

/// Where the shared cache's Redis listens, from `--shared-cache redis://HOST:PORT[/DB]`: an IP address
/// (IPv6 in brackets) or `localhost`, a port, and a database number (0 by default).
///
/// The host must be an address: resolving a name for Redis would go through the system's resolver — on a
/// host whose resolver is this very stub, a loop. `rediss://` (TLS) and a password inside the URL are
/// refused (hiredis 0.14 has no TLS; the password comes from `--shared-cache-password-file`).
public struct RedisEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// The address Redis listens on.
    public let address: IPAddress
    /// The TCP port.
    public let port: UInt16
    /// The database `SELECT`ed after connecting.
    public let database: Int

    public init(address: IPAddress, port: UInt16, database: Int = 0) {
        self.address = address
        self.port = port
        self.database = database
    }

    /// Reads `redis://HOST:PORT[/DB]`.
    ///
    /// - Throws: ``RedisEndpointError`` saying what is wrong.
    public static func parse(_ text: String) throws(RedisEndpointError) -> RedisEndpoint {
        if text.hasPrefix("rediss://") { throw .tls }
        guard text.hasPrefix("redis://") else { throw .scheme }
        var rest = Substring(text.dropFirst("redis://".count))
        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            let path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
            if !path.isEmpty {
                guard path.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int(path), number <= 65_535 else {
                    throw .database(String(path))
                }
                database = number
            }
        }
        if rest.contains("@") { throw .credentials }
        let host: Substring, port: Substring
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw .host(String(rest)) }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            guard after.hasPrefix(":") else { throw .port(String(after)) }
            port = after.dropFirst()
        } else {
            guard let colon = rest.lastIndex(of: ":") else { throw .port("") }
            host = rest[..<colon]
            port = rest[rest.index(after: colon)...]
        }
        guard let number = UInt16(port: port) else { throw .port(String(port)) }
        let address: IPAddress
        if host == "localhost" {
            address = .loopbackV4
        } else if let literal = IPAddress(String(host)), rest.hasPrefix("[") == (literal.family == .v6) {
            address = literal
        } else {
            throw .host(String(host))
        }
        return RedisEndpoint(address: address, port: number, database: database)
    }

    public var description: String {
        let host = address.family == .v6 ? "[\(address)]" : "\(address)"
        return "redis://\(host):\(port)" + (database == 0 ? "" : "/\(database)")
    }
}

/// Why a `--shared-cache` URL cannot be used.
public enum RedisEndpointError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Not `redis://`.
    case scheme
    /// `rediss://`: TLS, which hiredis 0.14 does not speak.
    case tls
    /// A user or password inside the URL.
    case credentials
    /// The host is not an IP address (or `localhost`).
    case host(String)
    /// The port is missing or not 1-65535.
    case port(String)
    /// The database is not a number 0-65535.
    case database(String)

    public var description: String {
        switch self {
        case .scheme: "it must be redis://HOST:PORT[/DB]"
        case .tls: "rediss:// (TLS) is not supported; use redis:// on a trusted network"
        case .credentials: "a password inside the URL is refused; give it with --shared-cache-password-file"
        case .host(let host): "'\(host)' is not an IP address (IPv6 in brackets) or localhost"
        case .port(let port): "'\(port)' is not a port (1-65535)"
        case .database(let database): "'\(database)' is not a database number (0-65535)"
        }
    }
}
