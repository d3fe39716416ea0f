/// The outcome of validating one answer (RFC 4033 §5, RFC 4035 §4.3).
package enum DNSSECVerdict: Sendable, Hashable, CustomStringConvertible {
    /// A chain of valid signatures from a trust anchor covers every RRset of the answer; keep each RRset
    /// at most its `ttls` (capped by its signature's original TTL and expiry).
    case secure(SecureTTLs)
    /// A signed proof (or an unsupported algorithm) shows the zone is not signed; `why` says which.
    case insecure(why: InsecureReason)
    /// Anything else under a trust anchor.
    case bogus(BogusReason)
    /// No trust anchor covers the name; treated as insecure.
    case indeterminate

    package var description: String {
        switch self {
        case .secure: "secure"
        case .insecure(let why): "insecure (\(why))"
        case .bogus(let reason): "bogus: \(reason)"
        case .indeterminate: "indeterminate"
        }
    }
}
