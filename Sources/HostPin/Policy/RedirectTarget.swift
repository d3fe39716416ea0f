import Foundation

/// Where a `redirect` rule's `to` sends a request.
enum RedirectTarget: Sendable, Hashable, CustomStringConvertible {
    /// An http or https URL: for a `urlPrefix` rule, the prefix is replaced by it and the rest of the
    /// path and query kept; for any other matcher, it is the whole target.
    case url(URL)
    /// `host[:port]`: only the host (and the port, when given) changes; scheme, path and query stay.
    case authority(host: String, port: Int?)

    /// Parses `to`: `http(s)://…`, or `host`, `host:port`, `[v6]:port`.
    ///
    /// - Throws: ``RuleProblem/Reason`` for another scheme, an invalid host or URL, a port out of range.
    static func parse(_ text: String) throws(RuleProblem.Reason) -> RedirectTarget {
        if let colon = text.firstIndex(of: ":"), Self.isScheme(text[..<colon]),
           !text[text.index(after: colon)...].allSatisfy(\.isNumber) {
            // A scheme: `http://…`, `ftp://…`, `javascript:…` — not `host:8080`.
            let scheme = text[..<colon].lowercased()
            guard scheme == "http" || scheme == "https" else { throw .redirectTargetNotHTTP(text) }
            guard let url = URL(string: text), let host = url.host, !host.isEmpty else { throw .badURL(text) }
            if let port = url.port, !(1...65535).contains(port) { throw .portOutOfRange(text) }
            try checkHost(host)
            return .url(url)
        }
        guard let url = URL(string: "http://" + text), let host = url.host, !host.isEmpty,
              url.path.isEmpty, url.query == nil, url.user == nil
        else { throw .badURL(text) }
        if let port = url.port, !(1...65535).contains(port) { throw .portOutOfRange(text) }
        try checkHost(host)
        return .authority(host: URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedHost ?? host,
                          port: url.port)
    }

    private static func checkHost(_ host: String) throws(RuleProblem.Reason) {
        do throws(ResolutionError) {
            _ = try HostName.parse(host)
        } catch {
            guard case .badName(_, let problem) = error else { return }
            throw .badHost(host, problem)
        }
    }

    /// RFC 3986 §3.1: a letter, then letters, digits, `+`, `-` and `.`.
    private static func isScheme(_ text: Substring) -> Bool {
        guard let first = text.first, first.isASCII, first.isLetter else { return false }
        return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
    }

    /// The URL `url` goes to, as `matcher` matched it.
    func target(for url: URL, matchedBy matcher: RuleMatcher) -> URL? {
        switch self {
        case .url(let target):
            guard case .urlPrefix(let prefix) = matcher, let request = RequestURL(url) else { return target }
            let rest = request.pathAndQuery.dropFirst(prefix.pathAndQuery.description.count)
            return URL(string: target.absoluteString + rest)
        case .authority(let host, let port):
            guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return nil }
            components.percentEncodedHost = host
            if let port { components.port = port }
            components.fragment = nil
            return components.url
        }
    }

    /// The `to` text.
    var description: String {
        switch self {
        case .url(let url): url.absoluteString
        case .authority(let host, let port): host + (port.map { ":\($0)" } ?? "")
        }
    }
}
