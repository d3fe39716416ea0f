import Foundation

/// A rule's `url` or `urlPrefix`: one origin (scheme, host, port) and a pattern for the path and query.
///
/// For `url`, the path and query must match the pattern's whole (`*` globs allowed, see ``PathGlob``);
/// for `urlPrefix`, they must start with the pattern's text (no globs). Scheme and host compare
/// case-insensitively, the port with the scheme's default filled in (`http://a/` is `http://a:80/`).
struct URLPattern: Sendable, Hashable, CustomStringConvertible {
    /// The origin and path of the pattern as a URL (for `url` a `*` stays literal text).
    let origin: RequestURL
    /// The path and query the pattern compares.
    let pathAndQuery: PathGlob
    /// The text as the rule wrote it.
    let description: String

    /// Parses an http or https URL naming a host.
    ///
    /// - Throws: ``RuleProblem/Reason`` for another scheme, no host, an invalid host name, an IP literal
    ///   or `localhost`, or a port out of range.
    static func parse(_ text: String) throws(RuleProblem.Reason) -> URLPattern {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty
        else { throw .badURL(text) }
        if let port = url.port, !(1...65535).contains(port) { throw .portOutOfRange(text) }
        do throws(ResolutionError) {
            _ = try HostName.parse(host)
        } catch {
            guard case .badName(_, let problem) = error else { throw .badURL(text) }
            throw .badHost(host, problem)
        }
        guard let origin = RequestURL(url) else { throw .badURL(text) }
        if origin.host.literalAddress != nil || origin.host.isLocalhost { throw .alwaysPasses(text) }
        return URLPattern(origin: origin, pathAndQuery: PathGlob(origin.pathAndQuery), description: text)
    }

    /// Whether `url` is on the pattern's origin.
    func sameOrigin(_ url: RequestURL) -> Bool { origin.sameOrigin(url) }
}
