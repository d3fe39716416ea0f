/// Why an answer is bogus: which RRset, which key (when one was involved) and what was wrong — the
/// reason a `.dnssecBogus` failure and the stub's Extended DNS Error (RFC 8914) will carry.
public struct BogusReason: Error, Sendable, Hashable, CustomStringConvertible {
    /// The RRset that failed, `owner TYPE`.
    public let rrset: String
    /// The key tag of the DNSKEY involved, when one was.
    public let keyTag: UInt16?
    public let problem: Problem

    package init(rrset: String, keyTag: UInt16? = nil, problem: Problem) {
        self.rrset = rrset
        self.keyTag = keyTag
        self.problem = problem
    }

    package init(_ set: RRset, keyTag: UInt16? = nil, problem: Problem) {
        self.init(rrset: set.description, keyTag: keyTag, problem: problem)
    }

    /// What was wrong.
    public enum Problem: Sendable, Hashable, CustomStringConvertible {
        /// The RRset carries no RRSIG (an upstream that ignores the DO bit strips them: EDE 10).
        case signaturesMissing
        /// No RRSIG names the zone being validated as its signer, or the signer is no ancestor-or-self
        /// of the owner (RFC 4035 §5.3.1).
        case wrongSigner(WireName)
        /// The RRSIG's RDATA cannot be read.
        case malformedSignature
        /// The DNSKEY's RDATA cannot be read, by HostPin or by ldns.
        case malformedKey
        /// A DS record's RDATA holds no digest after its fixed fields.
        case malformedDS
        /// No DNSKEY of the zone has the RRSIG's key tag and algorithm (EDE 9).
        case noMatchingKey(keyTag: UInt16, algorithm: UInt8)
        /// The only keys with that tag lack the ZONE flag (RFC 4034 §2.1.1).
        case notAZoneKey
        /// The only keys with that tag have the REVOKE flag (RFC 5011 §3).
        case revokedKey
        /// A DNSKEY's protocol field is not 3 (RFC 4034 §2.1.2).
        case badKeyProtocol(UInt8)
        /// The RRSIG's Labels field counts more labels than the owner has (RFC 4035 §5.3.1).
        case labelsExceedOwner(labels: UInt8)
        /// Inception is after the check time plus the 1 h allowance (seconds since 1970).
        case signatureNotYetValid(inception: UInt32)
        /// Expiration is before the check time less the 1 h allowance (EDE 7).
        case signatureExpired(expiration: UInt32)
        /// ldns's cryptography rejected the signature, with ldns's reason.
        case signatureInvalid(String)
        /// No signature of the RRset uses an algorithm HostPin verifies, though the zone's keys are secure.
        case noSupportedSignature
        /// A validation cap was reached (EDE 6).
        case capReached(ValidationLimits.Cap)
        /// No DS of the parent (or anchor) matches a DNSKEY that signs the zone's DNSKEY RRset.
        case noKeyMatchesDS
        /// The zone's DNSKEY RRset is absent (EDE 9).
        case dnskeyMissing
        /// The parent answered no DS and no signed proof of its absence was checked (RFC 4035 §5.2).
        case dsMissingWithoutProof
        /// A wildcard expansion without a proof that no closer name exists (RFC 4035 §5.3.4).
        case wildcardWithoutProof
        /// The answer holds no RRset for a name of the CNAME chain.
        case answerMissing
        /// A negative answer without a signed NSEC proof of what it claims (RFC 4035 §5.4).
        case denialMissing

        public var description: String {
            switch self {
            case .signaturesMissing: "no RRSIG (does the upstream ignore the DO bit?)"
            case .wrongSigner(let signer): "signer \(signer) is not the zone apex above the owner"
            case .malformedSignature: "malformed RRSIG"
            case .malformedKey: "malformed DNSKEY"
            case .malformedDS: "malformed DS"
            case .noMatchingKey(let tag, let algorithm): "no DNSKEY with key tag \(tag), algorithm \(algorithm)"
            case .notAZoneKey: "the DNSKEY lacks the ZONE flag"
            case .revokedKey: "the DNSKEY is revoked (REVOKE flag)"
            case .badKeyProtocol(let value): "DNSKEY protocol \(value), not 3"
            case .labelsExceedOwner(let labels): "RRSIG labels \(labels) exceed the owner's"
            case .signatureNotYetValid(let inception): "signature not valid before \(inception) (seconds since 1970)"
            case .signatureExpired(let expiration): "signature expired at \(expiration) (seconds since 1970)"
            case .signatureInvalid(let why): "signature does not verify (\(why))"
            case .noSupportedSignature: "no signature with a supported algorithm"
            case .capReached(let cap): "validation cap reached: \(cap)"
            case .noKeyMatchesDS: "no DS matches a key that signs the DNSKEY RRset"
            case .dnskeyMissing: "no DNSKEY RRset"
            case .dsMissingWithoutProof: "no DS and no signed proof of its absence"
            case .wildcardWithoutProof: "wildcard expansion without a no-closer-match proof"
            case .answerMissing: "the answer lacks an RRset of the CNAME chain"
            case .denialMissing: "no signed NSEC proves the name or type absent"
            }
        }
    }

    public var description: String {
        "\(rrset)" + (keyTag.map { " (key \($0))" } ?? "") + ": \(problem)"
    }
}
