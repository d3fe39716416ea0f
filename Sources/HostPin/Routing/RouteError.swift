/// Why a list of ``Route``s cannot make a ``RouteTable``. The command line and the configuration file
/// report each as a usage error (exit 2) naming the route.
public enum RouteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A route without any domain.
    case noDomains(Route)
    /// A route without any upstream for `domain`.
    case noUpstreams(HostName)
    /// The domain is an IP address, not a domain name.
    case addressLiteral(HostName)
    /// A special-use zone that HostPin always answers itself (`localhost`, `invalid`, `local`, `onion`,
    /// `resolver.arpa`; RFC 6761, RFC 6762, RFC 7686, RFC 9462): only the reverse zones and `home.arpa` may
    /// be routed.
    case specialUse(HostName, SpecialUseName)
    /// Two routes (or one route twice) for the same domain.
    case duplicateDomain(HostName)

    public var description: String {
        switch self {
        case .noDomains(let route): "the route '\(route)' names no domain"
        case .noUpstreams(let domain): "the route for \(domain) names no server"
        case .addressLiteral(let domain): "'\(domain)' is an IP address, not a domain a route can take"
        case .specialUse(let domain, let zone):
            "\(domain) is of the special-use zone \(zone), which HostPin answers itself and never routes "
                + "(only the reverse zones and home.arpa may be routed)"
        case .duplicateDomain(let domain): "\(domain) has two routes"
        }
    }
}
