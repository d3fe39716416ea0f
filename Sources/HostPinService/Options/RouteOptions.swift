import HostPin

/// `--route DOMAIN[,DOMAIN…]=UPSTREAM[,UPSTREAM…][,KEY=VALUE…]` (repeatable) and the configuration
/// file's `routes`, which is written as these values: split DNS (``RouteTable``).
///
/// The value is split at its first `=`: domains before it, upstreams after it, comma-separated; an item
/// after it that starts with one of ``policyKeys`` and `=` sets that policy instead (`allowPrivate=false`,
/// `dnssec=validate|report|off`, `trustAnchor=FILE`, `serveStale=false`), so the command line takes what
/// a file's route object does. A route's DNSSEC is off unless it names a trust anchor (then validate) or
/// `dnssec` (validate from `trustAnchor`, else from the command's anchors).
package enum RouteOptions {
    /// The policy keys of a route, as the configuration file names them.
    package static let policyKeys = ["allowPrivate", "dnssec", "trustAnchor", "serveStale"]

    /// Takes every `--route` from `parser` and checks them together.
    ///
    /// - Parameters:
    ///   - defaultAnchors: The anchors a route validates from when it says `dnssec=validate` without a
    ///     `trustAnchor` (the command's `--trust-anchor`, `HOSTPIN_TRUST_ANCHOR` or the built-in ones).
    /// - Throws: ``UsageError/invalidValue(option:reason:)`` for `--route`, naming the bad domain, server
    ///   or key (``RouteError`` for two routes of one domain, a special-use zone, no server).
    package static func parse(_ parser: inout OptionParser, defaultAnchors: TrustAnchors) throws(UsageError) -> RouteTable {
        let routes = try parser.values("--route") { text throws(UsageError) in
            try route(text, defaultAnchors: defaultAnchors)
        }
        do throws(RouteError) {
            return try RouteTable(routes)
        } catch {
            throw .invalidValue(option: "--route", reason: error.description)
        }
    }

    /// One `--route` value.
    ///
    /// - Throws: ``UsageError/invalidValue(option:reason:)`` for `--route`.
    package static func route(_ text: String, defaultAnchors: TrustAnchors) throws(UsageError) -> Route {
        func bad(_ reason: String) -> UsageError { .invalidValue(option: "--route", reason: "'\(text)': \(reason)") }
        guard let equals = text.firstIndex(of: "=") else { throw bad("expected DOMAIN=UPSTREAM[,UPSTREAM...]") }
        var domains: [HostName] = []
        for item in text[..<equals].split(separator: ",", omittingEmptySubsequences: false) {
            let domain: HostName
            do throws(ResolutionError) {
                domain = try HostName.parse(String(item))
            } catch {
                let reason = if case .badName(_, let problem) = error { "\(problem)" } else { error.description }
                throw bad("'\(item)' is not a valid domain name: \(reason)")
            }
            guard !domains.contains(domain) else { throw bad("'\(domain)' is listed twice") }
            domains.append(domain)
        }
        guard text.index(after: equals) < text.endIndex else { throw bad("the route names no server") }
        var upstreams: [Upstream] = []
        var allowPrivate = true, serveStale = true
        var mode: DNSSECMode?
        var anchorFile: String?
        for item in text[text.index(after: equals)...].split(separator: ",", omittingEmptySubsequences: false) {
            if let key = policyKeys.first(where: { item.hasPrefix($0 + "=") }) {
                let value = String(item.dropFirst(key.count + 1))
                switch key {
                case "allowPrivate": allowPrivate = try flag(value, key, bad)
                case "serveStale": serveStale = try flag(value, key, bad)
                case "dnssec":
                    guard let parsed = DNSSECMode(rawValue: value) else { throw bad("dnssec '\(value)' is not validate, report or off") }
                    mode = parsed
                default:
                    guard !value.isEmpty else { throw bad("trustAnchor names no file") }
                    anchorFile = value
                }
                continue
            }
            let upstream: Upstream
            do throws(Upstream.ParseError) {
                upstream = try Upstream.parse(String(item))
            } catch {
                throw bad(error.description)
            }
            // Listed twice, a server would be asked twice in a row when it fails.
            guard !upstreams.contains(upstream) else { throw bad("'\(upstream)' is listed twice") }
            upstreams.append(upstream)
        }
        var route = Route(domains: domains, upstreams: upstreams)
        route.allowPrivate = allowPrivate
        route.serveStale = serveStale
        var anchors = defaultAnchors
        if let anchorFile {
            do throws(TrustAnchorError) {
                anchors = try TrustAnchors.load(path: anchorFile)
            } catch {
                throw bad("trustAnchor: \(error.description)")
            }
        }
        let resolved = mode ?? (anchorFile == nil ? .off : .validate)
        route.dnssec = resolved == .off ? .off : DNSSECConfiguration(mode: resolved, trustAnchors: anchors)
        return route
    }

    private static func flag(_ value: String, _ key: String, _ bad: (String) -> UsageError) throws(UsageError) -> Bool {
        switch value {
        case "true": return true
        case "false": return false
        default: throw bad("\(key) '\(value)' is not true or false")
        }
    }

    /// The help lines for `--route`.
    package static let helpLines = """
          --route DOMAIN[,DOMAIN...]=UPSTREAM[,UPSTREAM...]
                               Split DNS: names at or below DOMAIN (whole labels) go to these
                               upstreams only, and no other name does; longest domain wins;
                               repeatable. Items allowPrivate=false, dnssec=validate|report|off,
                               trustAnchor=FILE, serveStale=false set the route's policy (default:
                               private addresses allowed, DNSSEC off unless trustAnchor is given).
        """
}
