import Foundation

/// Which requests a rule is about: a `host` pattern (optionally narrowed by a `path` glob), a `url`
/// (exact, or with `*` globs in its path and query), or a `urlPrefix`.
enum RuleMatcher: Sendable, Hashable, CustomStringConvertible {
    case host(HostPattern, path: PathGlob?)
    case url(URLPattern)
    case urlPrefix(URLPattern)

    /// What a matcher is compared with: a request's URL, or a `CONNECT` tunnel's host and port.
    enum Subject {
        case url(RequestURL)
        case authority(HostName)

        var host: HostName {
            switch self {
            case .url(let url): url.host
            case .authority(let host): host
            }
        }
    }

    func matches(_ subject: Subject) -> Bool {
        switch (self, subject) {
        case (.host(let pattern, nil), _):
            pattern.matches(subject.host)
        case (.host(let pattern, let path?), .url(let url)):
            pattern.matches(url.host) && path.matches(Substring(url.path))
        case (.url(let pattern), .url(let url)):
            pattern.sameOrigin(url) && pattern.pathAndQuery.matches(Substring(url.pathAndQuery))
        case (.urlPrefix(let pattern), .url(let url)):
            pattern.sameOrigin(url) && url.pathAndQuery.hasPrefix(pattern.pathAndQuery.description)
        case (.host(_, _?), .authority), (.url, .authority), (.urlPrefix, .authority):
            // The path of a tunnelled request is inside TLS.
            false
        }
    }

    /// Whether every request `other` matches, this matches too (used to find rules that can never
    /// decide). Conservative: `false` when that cannot be told from the patterns alone.
    func covers(_ other: RuleMatcher) -> Bool {
        switch (self, other) {
        case (.host(let pattern, let path), .host(let inner, let innerPath)):
            guard pattern.covers(inner) else { return false }
            guard let path, !path.matchesEveryPath else { return true }
            return path == innerPath
        case (.host(let pattern, let path), .url(let url)), (.host(let pattern, let path), .urlPrefix(let url)):
            guard pattern.matches(url.origin.host) else { return false }
            guard let path, !path.matchesEveryPath else { return true }
            if case .url = other, !url.pathAndQuery.hasWildcard { return path.matches(Substring(url.origin.path)) }
            return false
        case (.url(let pattern), .url(let url)):
            guard pattern.sameOrigin(url.origin) else { return false }
            return pattern.pathAndQuery == url.pathAndQuery
                || (!url.pathAndQuery.hasWildcard && pattern.pathAndQuery.matches(Substring(url.pathAndQuery.description)))
        case (.urlPrefix(let prefix), .url(let url)), (.urlPrefix(let prefix), .urlPrefix(let url)):
            return prefix.sameOrigin(url.origin)
                && url.pathAndQuery.literalPrefix.hasPrefix(prefix.pathAndQuery.description)
        case (.url, .host), (.url, .urlPrefix), (.urlPrefix, .host):
            return false
        }
    }

    /// A URL the matcher matches, for load-time checks (redirect loops): each `*` taken as `x`.
    var example: URL? {
        switch self {
        case .host(let pattern, let path):
            let host = switch pattern {
            case .exact(let name): name.text
            case .below(let domain): "x." + domain.text
            case .any: "x.example"
            }
            let example = path?.example ?? "/"
            return URL(string: "http://\(host)" + (example.hasPrefix("/") ? example : "/" + example))
        case .url(let pattern), .urlPrefix(let pattern):
            return URL(string: pattern.origin.origin + pattern.pathAndQuery.example)
        }
    }

    /// The rule's keys as written: `host *.example.test path /img/*`, `urlPrefix http://a/old/`.
    var description: String {
        switch self {
        case .host(let pattern, let path): "host \(pattern)" + (path.map { " path \($0)" } ?? "")
        case .url(let pattern): "url \(pattern)"
        case .urlPrefix(let pattern): "urlPrefix \(pattern)"
        }
    }
}

extension PathGlob {
    /// `*` and `/*` match every path.
    var matchesEveryPath: Bool { description == "*" || description == "/*" }
}
