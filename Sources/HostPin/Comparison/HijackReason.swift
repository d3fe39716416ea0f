/// One piece of evidence in a ``HijackVerdict``: a stable code and a sentence with the addresses and
/// names involved.
public struct HijackReason: Sendable, Hashable, CustomStringConvertible {
    /// What was found. The raw value is the code `hostpin compare` prints and puts in JSON.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The local answer points into a special-purpose block (RFC 6890: private, loopback, link-local,
        /// shared, documentation, …) that is not configured as ordinary, and the trusted answer does not.
        case specialRange = "special-range"
        /// The trusted side says the name does not exist (NXDOMAIN, RFC 2308 §2.1), the local resolver
        /// answers it with addresses: NXDOMAIN rewritten, typically to an ad or search page.
        case nxdomainRewrite = "nxdomain-rewrite"
        /// The local resolver also answers a random, nonexistent name under the same parent, with an
        /// address it gave for the name: it redirects every name (a wildcard redirect).
        case wildcard
        /// A local address is on the known hijack list.
        case knownHijackAddress = "known-hijack-address"
        /// A local address serves a certificate not valid for the name, while a trusted address serves a
        /// valid one (RFC 6125 §6).
        case badCertificate = "bad-certificate"
        /// The local answer carries RRSIGs that fail for a zone the trusted side validated as signed
        /// (RFC 4035 §5.3): it was changed after the zone signed it (``SignatureProbe``).
        case badSignature = "bad-signature"
        /// The local addresses are not among the trusted ones, and nothing above marks them: different
        /// but ordinary public addresses, as CDNs and load balancers give.
        case disjoint
        /// The local resolver says the name does not exist or has no address, the trusted side resolves
        /// it: a filter blocks it, or the record just changed.
        case blocked
        /// The local resolver gave no answer (timeout, SERVFAIL, REFUSED): nothing to compare.
        case localFailed = "local-failed"
        /// The local answer carries no RRSIG at all for a zone the trusted side validated as signed:
        /// evidence of nothing, as many local resolvers strip signatures from honest answers too.
        case noSignatures = "no-signatures"

        /// Whether the code is evidence of a hijack (the verdict is then ``HijackVerdict/hijacked(_:)``);
        /// the others only explain an ``HijackVerdict/inconclusive(_:)``.
        public var isHijack: Bool {
            switch self {
            case .specialRange, .nxdomainRewrite, .wildcard, .knownHijackAddress, .badCertificate, .badSignature: true
            case .disjoint, .blocked, .localFailed, .noSignatures: false
            }
        }
    }

    /// What was found.
    public let code: Code
    /// One sentence saying what, with the addresses and names.
    public let detail: String

    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// `wildcard: the local resolver …`.
    public var description: String { "\(code.rawValue): \(detail)" }
}
