/// Why validation found an answer insecure (RFC 4035 §4.3, §5.2): which of the proofs of "not signed"
/// held, and where. The stub tells a client one of them apart — NSEC3 iterations above the limit, for
/// which it adds Extended DNS Error 27 (RFC 9276 §3.2, RFC 8914 §4.28) to the answer.
package struct InsecureReason: Sendable, Hashable, CustomStringConvertible {
    /// Which proof.
    package enum Cause: Sendable, Hashable {
        /// A signed NSEC or NSEC3 proof that a delegation on the way has no DS: an unsigned child zone.
        case unsignedDelegation
        /// An NSEC3 opt-out span covers the name or its delegation (RFC 5155 §9.2): it may be unsigned.
        case optOut
        /// The only NSEC3 records that could prove it have more than ``NSEC3Record/maxIterations``
        /// iterations: not hashed (RFC 9276 §3.2, CVE-2023-50868).
        case nsec3Iterations
        /// Every DS or anchor of a zone is for an algorithm or digest HostPin does not support (RFC 4035 §5.2).
        case unsupportedAlgorithm
        /// No trust anchor covers the name.
        case noTrustAnchor
    }

    package let cause: Cause
    /// One sentence: what was proven, with the names.
    package let detail: String

    package init(_ cause: Cause, _ detail: String) {
        self.cause = cause
        self.detail = detail
    }

    package var description: String { detail }

    /// The reason as an answer carries it (``Resolution/insecurity``, ``NegativeAnswer/insecurity``,
    /// ``ForwardedAnswer/insecurity``): only one a client is told of (NSEC3 iterations, EDE 27), `nil` for
    /// the others. Most insecure answers are of unsigned zones; a sentence each would grow every such
    /// cache entry for nothing that reads it.
    package var told: InsecureReason? { cause == .nsec3Iterations ? self : nil }
}
