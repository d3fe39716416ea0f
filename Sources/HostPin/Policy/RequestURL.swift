import Foundation

/// An http(s) URL in the form rules compare: lower-case scheme, the host normalised as
/// ``HostName/parse(_:)`` does, the port with the scheme's default filled in, and the percent-encoded
/// path (`/` when empty) and query as the URL carries them. The fragment, which never reaches a server,
/// is left out.
struct RequestURL: Sendable, Hashable {
    let scheme: String
    let host: HostName
    let port: Int
    let path: String
    let query: String?

    /// `nil` for a URL that is not http or https, has no host, or whose host is no valid name.
    init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let hostText = url.host, !hostText.isEmpty, let host = try? HostName.parse(hostText),
              let components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        else { return nil }
        self.scheme = scheme
        self.host = host
        port = url.port ?? Self.defaultPort(scheme)
        path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        query = components.percentEncodedQuery
    }

    /// `/a/b?c=d`: what `url` patterns and `urlPrefix` compare.
    var pathAndQuery: String { query.map { path + "?" + $0 } ?? path }

    /// Whether `other` has the same scheme, host and port (RFC 6454 §4).
    func sameOrigin(_ other: RequestURL) -> Bool {
        scheme == other.scheme && host == other.host && port == other.port
    }

    /// `http://www.example.test:8080`: the port only when it is not the scheme's default.
    var origin: String {
        "\(scheme)://\(host.literalAddress?.uriHost ?? host.text)" + (port == Self.defaultPort(scheme) ? "" : ":\(port)")
    }

    static func defaultPort(_ scheme: String) -> Int { scheme == "https" ? 443 : 80 }
}
