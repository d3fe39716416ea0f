/// The signature probe: the compared name asked of the local resolver once more with DO and CD set
/// (RFC 4035 §3.2.1, §3.2.2), and its reply validated from the trusted side's trust anchors. A
/// resolver that rewrites a signed zone's answer cannot sign the forgery: the RRSIGs it passes on (or
/// makes up) fail. One that strips every RRSIG proves nothing — many local resolvers (home routers, old
/// forwarders) drop them from honest answers too.
///
/// The chain (DNSKEY, DS) is asked of the trusted resolver's first upstream, by a validator of the
/// probe's own: the trusted side's key and bogus caches are neither used nor written, so a forged local
/// answer never marks the name bogus for the trusted resolution.
public struct SignatureProbe: Sendable, Hashable {
    /// What validating the local resolver's signed reply found.
    public enum Finding: Sendable, Hashable, CustomStringConvertible {
        /// The reply validates: ``DNSSECStatus/secure``, or insecure or indeterminate (no signed zone
        /// covers it, for all the trusted anchors know).
        case valid(DNSSECStatus)
        /// The reply carries RRSIGs, and they fail for its RRsets (a signature that does not verify,
        /// expired, by a key the zone does not have, a denial or wildcard proof missing): the answer was
        /// changed after the zone signed it.
        case badSignatures(BogusReason)
        /// The reply carries no RRSIG at all, under a trust anchor.
        case unsigned
        /// Nothing was judged: the local resolver gave no reply to check, the chain could not be built
        /// from the trusted upstream, or the probe ran out of time; why.
        case unchecked(String)

        /// `valid (secure)`, `bad signatures: REASON`, `unsigned`, `unchecked: WHY`.
        public var description: String {
            switch self {
            case .valid(let status): "valid (\(status))"
            case .badSignatures(let reason): "bad signatures: \(reason)"
            case .unsigned: "unsigned"
            case .unchecked(let why): "unchecked: \(why)"
            }
        }
    }

    /// The name asked.
    public let name: HostName
    /// What validation found.
    public let finding: Finding

    public init(name: HostName, finding: Finding) {
        self.name = name
        self.finding = finding
    }

    /// Asks `local` for `name` with DO and CD set and validates its replies (A then AAAA for `any`)
    /// from `trusted`'s trust anchors, the chain asked of `trusted`'s first upstream.
    ///
    /// - Returns: The probe, or `nil` when `trusted` does not validate (``DNSSECMode/off``) or `name` needs
    ///   no query (an IP literal, `localhost`).
    public static func run(_ name: HostName, family: AddressFamily, trusted: TrustedResolver,
                           local: UntrustedResolver) async -> SignatureProbe? {
        guard name.literalAddress == nil, !name.isLocalhost, let owner = WireName(name.text),
              let validator = trusted.probeValidator() else { return nil }
        let (answer, signed) = await local.askSigned(name, family: family)
        guard answer != nil else { return SignatureProbe(name: name, finding: .unchecked("the probe was cancelled")) }
        guard !signed.isEmpty else {
            return SignatureProbe(name: name, finding: .unchecked("the local resolver gave no answer to check"))
        }
        let carriesSignatures = signed.contains { reply in
            (reply.answer + reply.authority).contains { $0.type == DNSSECRecord.Kind.rrsig }
        }
        let verdict = await withCheckedContinuation { (continuation: CheckedContinuation<DNSSECVerdict?, Never>) in
            validator.validate(signed[...], name: owner, deadline: nil) { continuation.resume(returning: $0) }
        }
        return SignatureProbe(name: name, finding: finding(of: verdict, carriesSignatures: carriesSignatures))
    }

    /// What `verdict` says of a local reply that did or did not carry RRSIGs.
    static func finding(of verdict: DNSSECVerdict?, carriesSignatures: Bool) -> Finding {
        switch verdict {
        case nil: return .unchecked("the probe was cancelled")
        case .secure: return .valid(.secure)
        case .insecure: return .valid(.insecure)
        case .indeterminate: return .valid(.indeterminate)
        case .bogus(let reason):
            guard carriesSignatures else { return .unsigned }
            // A chain that could not be built from the trusted upstream says nothing about the local
            // answer's own signatures.
            switch reason.problem {
            case .dnskeyMissing, .noKeyMatchesDS, .dsMissingWithoutProof, .capReached, .malformedKey, .malformedDS,
                 .notAZoneKey, .revokedKey, .badKeyProtocol:
                return .unchecked("the chain could not be validated: \(reason)")
            case .signaturesMissing, .wrongSigner, .malformedSignature, .noMatchingKey, .labelsExceedOwner,
                 .signatureNotYetValid, .signatureExpired, .signatureInvalid, .noSupportedSignature,
                 .wildcardWithoutProof, .answerMissing, .denialMissing:
                return .badSignatures(reason)
            }
        }
    }
}
