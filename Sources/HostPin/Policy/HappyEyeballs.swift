/// How HostPin connects to a host with several addresses (Happy Eyeballs, RFC 8305): the order of the
/// attempts and how long one runs alone before the next starts. Pure: the interceptor hands the order
/// and the delay to libcurl, which races the families itself; the proxy runs a ``ConnectionRace`` on its
/// event loop's timers.
///
/// With `family: .v4` or `.v6` (the family-only setting) a name has addresses of one family only and
/// the order is the answer's.
public struct HappyEyeballs: Sendable, Hashable {
    /// The family attempted first: IPv6 by default (RFC 8305 §4, after RFC 6724's default policy table,
    /// which ranks IPv6 above IPv4).
    public let preferredFamily: IPAddress.Family
    /// How long an attempt runs alone before the next one starts when it has neither connected nor
    /// failed: RFC 8305 §5's Connection Attempt Delay, 250 ms by default.
    public let attemptDelay: Duration

    /// The shortest delay RFC 8305 §5 allows (it MUST NOT be less than 10 ms).
    public static let minimumAttemptDelay = Duration.milliseconds(10)
    /// The longest delay RFC 8305 §5 recommends (2 s).
    public static let maximumAttemptDelay = Duration.seconds(2)

    /// - Parameters:
    ///   - preferredFamily: The family attempted first; IPv6 by default.
    ///   - attemptDelay: The Connection Attempt Delay; 250 ms by default, held within
    ///     ``minimumAttemptDelay`` and ``maximumAttemptDelay``.
    public init(preferredFamily: IPAddress.Family = .v6, attemptDelay: Duration = .milliseconds(250)) {
        self.preferredFamily = preferredFamily
        self.attemptDelay = min(max(attemptDelay, Self.minimumAttemptDelay), Self.maximumAttemptDelay)
    }

    /// `addresses` in the order to attempt them (RFC 8305 §4, with a First Address Family Count of 1):
    /// the preferred family's first address, then the other family's first, alternating while both
    /// have addresses left; each family keeps its answer order, and the rest of the longer one ends the
    /// list. Addresses of one family only come back as they are.
    public func order(_ addresses: [IPAddress]) -> [IPAddress] {
        let preferred = addresses.filter { $0.family == preferredFamily }
        let other = addresses.filter { $0.family != preferredFamily }
        guard !preferred.isEmpty, !other.isEmpty else { return addresses }
        var ordered: [IPAddress] = []
        ordered.reserveCapacity(addresses.count)
        for index in 0..<max(preferred.count, other.count) {
            if index < preferred.count { ordered.append(preferred[index]) }
            if index < other.count { ordered.append(other[index]) }
        }
        return ordered
    }
}
