/// What validation found for one answer (RFC 4033 §5, RFC 4035 §4.3).
public enum DNSSECStatus: Sendable, Hashable, CustomStringConvertible {
    /// A chain of valid signatures from a trust anchor covers every RRset of the answer, the CNAME chain
    /// and a negative answer's NSEC/NSEC3 proof included.
    case secure
    /// A signed proof shows the zone is not signed (NSEC/NSEC3 denial of DS at a delegation, opt-out
    /// included), an algorithm is not supported (RFC 4035 §5.2), NSEC3 iterations exceed the limit
    /// (RFC 9276), or the name is under an insecure domain (a negative trust anchor).
    case insecure
    /// No trust anchor covers the name; treated as insecure.
    case indeterminate
    /// Anything else under a trust anchor — only ever carried by an answer handed out in
    /// ``DNSSECMode/report`` mode; in ``DNSSECMode/validate`` mode a bogus answer is a failure.
    case bogus(BogusReason)

    public var description: String {
        switch self {
        case .secure: "secure"
        case .insecure: "insecure"
        case .indeterminate: "indeterminate"
        case .bogus(let reason): "bogus: \(reason)"
        }
    }
}
