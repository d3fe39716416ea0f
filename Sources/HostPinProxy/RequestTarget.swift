import HostPin

/// The request-target of a request line, in one of RFC 9112 §3.2's four forms.
public enum RequestTarget: Sendable, Hashable {
    /// `/path?query` (§3.2.1): a request meant for an origin server, not for a proxy.
    case originForm(String)
    /// `http://host[:port]/path?query` (§3.2.2): what a client sends to a forward proxy. `path` is never
    /// empty (`/` when the URI has none) and keeps the query.
    case absoluteForm(Authority, path: String)
    /// `host:port` (§3.2.3): only for CONNECT; the port is required.
    case authorityForm(Authority)
    /// `*` (§3.2.4): only for a server-wide OPTIONS.
    case asteriskForm

    /// A host and port as written in a URI's authority (RFC 3986 §3.2) without userinfo.
    public struct Authority: Sendable, Hashable, CustomStringConvertible {
        /// The host, normalised (lower case; an IPv6 literal without brackets).
        public let host: HostName
        /// The port: as written, or 80 when an absolute-form URI has none.
        public let port: UInt16
        /// The authority as the client wrote it, for the `Host` field sent on (RFC 9112 §3.2.2).
        public let text: String

        /// `host:port`, IPv6 in brackets.
        public var description: String {
            (host.literalAddress?.uriHost ?? host.text) + ":\(port)"
        }
    }

    /// Parses `text` for a request with `method`.
    ///
    /// - Parameter known: An authority parsed before (a keep-alive connection's previous request): a
    ///   target written `http://` + its text, then a path, a query or nothing, takes it as it is instead
    ///   of parsing the same characters again.
    /// - Throws: ``HeadError/invalidTarget(_:)`` saying what is wrong.
    static func parse(_ text: String, method: String, known: Authority? = nil) throws(HeadError) -> RequestTarget {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw .invalidTarget("it is empty or holds whitespace, control or non-ASCII characters")
        }
        if let known, method != "CONNECT", let path = path(of: text, after: known) {
            return .absoluteForm(known, path: path)
        }
        if method == "CONNECT" {
            return .authorityForm(try authority(Substring(text), defaultPort: nil))
        }
        if text == "*" {
            guard method == "OPTIONS" else { throw .invalidTarget("'*' is only for OPTIONS") }
            return .asteriskForm
        }
        if text.hasPrefix("/") {
            guard !text.utf8.contains(UInt8(ascii: "#")) else { throw .invalidTarget("it has a fragment") }
            return .originForm(text)
        }
        // Byte searches, not Foundation's `range(of:)` and `contains(_:)` on strings: this runs for every
        // request, and those bridge through CFString (a profile of the proxy put this function at 12 % of
        // its time). The scheme ends at the first ':' (RFC 3986 §3.1 allows none in it).
        let bytes = text.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), bytes[colon...].starts(with: "://".utf8) else {
            throw .invalidTarget("'\(text)' is neither absolute-form (http://host/path) nor origin-form (/path)")
        }
        let scheme = text[..<colon].lowercased()
        guard scheme == "http" else {
            throw .invalidTarget("scheme '\(scheme)' is not proxied (use http://, or CONNECT for https)")
        }
        let rest = text[bytes.index(colon, offsetBy: 3)...]
        guard !rest.utf8.contains(UInt8(ascii: "#")) else { throw .invalidTarget("it has a fragment") }
        let pathStart = rest.utf8.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? rest.endIndex
        let authority = try authority(rest[..<pathStart], defaultPort: 80)
        var path = String(rest[pathStart...])
        if path.isEmpty || path.hasPrefix("?") { path = "/" + path }
        return .absoluteForm(authority, path: path)
    }

    /// The path ``parse(_:method:known:)`` gives for `text` when it is `http://` + `known.text` and then a
    /// path, a query or nothing; `nil` otherwise (then the whole parse runs, and answers any error). The
    /// same as parsing: `known.text` was cut at the first `/` or `?` after `://` and holds no `@`, so the
    /// authority ends where it ends now.
    private static func path(of text: String, after known: Authority) -> String? {
        let bytes = text.utf8
        let scheme = "http://".utf8
        guard bytes.starts(with: scheme) else { return nil }
        let rest = bytes.dropFirst(scheme.count)
        guard rest.starts(with: known.text.utf8), !rest.contains(UInt8(ascii: "#")) else { return nil }
        let after = rest.dropFirst(known.text.utf8.count)
        guard after.first.map({ $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") }) ?? true else { return nil }
        let path = String(Substring(after))
        return path.isEmpty || path.hasPrefix("?") ? "/" + path : path
    }

    /// Parses `host[:port]`; `defaultPort` nil means the port is required (authority-form). `text` is
    /// ASCII (``parse(_:method:)`` checked), so it is searched byte by byte, not by `Character`.
    private static func authority(_ text: Substring, defaultPort: UInt16?) throws(HeadError) -> Authority {
        if text.utf8.contains(UInt8(ascii: "@")) { throw .invalidTarget("userinfo ('user@') is not allowed (RFC 9110 §4.2.4)") }
        var hostPart = text
        var portPart: Substring?
        if text.hasPrefix("[") {
            guard let close = text.utf8.firstIndex(of: UInt8(ascii: "]")) else { throw .invalidTarget("an IPv6 literal lacks ']'") }
            hostPart = text[...close]
            let after = text[text.utf8.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw .invalidTarget("text follows the IPv6 literal") }
                portPart = after.dropFirst()
            }
        } else if let colon = text.utf8.lastIndex(of: UInt8(ascii: ":")) {
            hostPart = text[..<colon]
            portPart = text[text.utf8.index(after: colon)...]
        }
        let port: UInt16
        if let portPart, !(portPart.isEmpty && defaultPort != nil) {
            guard let value = UInt16(port: portPart)
            else { throw .invalidTarget("port '\(portPart)' is not a number from 1 to 65535") }
            port = value
        } else if let defaultPort {
            port = defaultPort
        } else {
            throw .invalidTarget("CONNECT needs host:port")
        }
        guard !hostPart.isEmpty else { throw .invalidTarget("the host is empty") }
        let host: HostName
        do throws(ResolutionError) {
            host = try HostName.parse(String(hostPart))
        } catch {
            throw .invalidTarget("\(error)")
        }
        return Authority(host: host, port: port, text: String(text))
    }
}
