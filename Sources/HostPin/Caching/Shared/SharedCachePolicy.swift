/// What a writer of the shared cache judged its answers with: its DNSSEC mode and its route (the
/// upstreams it asks). Each value carries its writer's policy under its HMAC, and a reader uses only values
/// written under its own: a writer that does not validate cannot feed a reader that does, nor one with
/// other upstreams.
public struct SharedCachePolicy: Sendable, Hashable {
    /// The writer's DNSSEC mode.
    public let dnssec: DNSSECMode
    /// The upstreams that answer, in configuration order (``Upstream/description`` each).
    public let route: [String]

    public init(dnssec: DNSSECMode, route: [String]) {
        self.dnssec = dnssec
        self.route = route
    }

    /// The bytes the HMAC covers and a reader compares: `dnssec=MODE;route=U1,U2`.
    var encoded: [UInt8] { Array("dnssec=\(dnssec.rawValue);route=\(route.joined(separator: ","))".utf8) }
}
