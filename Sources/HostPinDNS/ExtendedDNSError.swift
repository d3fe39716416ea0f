import HostPin

/// An Extended DNS Error (RFC 8914): the EDNS option (code 15) a SERVFAIL carries to say why — here
/// why DNSSEC validation found the answer bogus. Only a client that sent an OPT record gets it
/// (RFC 8914 §3: the option lives in the OPT record).
struct ExtendedDNSError: Sendable, Hashable {
    /// The INFO-CODE (RFC 8914 §4).
    let infoCode: UInt16
    /// The EXTRA-TEXT, UTF-8 (§2): the bogus reason, at most ``maximumTextOctets``.
    let extraText: String

    /// The EDNS option code of an Extended DNS Error (RFC 8914 §5.1).
    static let optionCode: UInt16 = 15
    /// The most octets of EXTRA-TEXT written: a SERVFAIL with its reason stays far below 512 octets.
    static let maximumTextOctets = 300

    /// 6 DNSSEC Bogus (RFC 8914 §4.7).
    static let dnssecBogus: UInt16 = 6
    /// 7 Signature Expired (§4.8).
    static let signatureExpired: UInt16 = 7
    /// 8 Signature Not Yet Valid (§4.9).
    static let signatureNotYetValid: UInt16 = 8
    /// 9 DNSKEY Missing (§4.10): no DNSKEY matches the DS, or the zone's DNSKEY RRset is absent.
    static let dnskeyMissing: UInt16 = 9
    /// 10 RRSIGs Missing (§4.11).
    static let rrsigsMissing: UInt16 = 10
    /// 12 NSEC Missing (§4.13): a denial or a wildcard expansion without its NSEC/NSEC3 proof.
    static let nsecMissing: UInt16 = 12
    /// 27 Unsupported NSEC3 Iterations Value (§4.28, RFC 9276 §3.2): the answer is insecure because its
    /// NSEC3 proof has more iterations than HostPin hashes; it goes with the answer itself, not a SERVFAIL.
    static let unsupportedNSEC3Iterations: UInt16 = 27

    init(infoCode: UInt16, extraText: String) {
        self.infoCode = infoCode
        var text = extraText
        while text.utf8.count > Self.maximumTextOctets { text.removeLast() }
        self.extraText = text
    }

    /// The error for a bogus answer: each ``HostPin/BogusReason/Problem`` mapped to its INFO-CODE here,
    /// in one place; the reason (RRset, key, problem) as EXTRA-TEXT.
    init(bogus reason: BogusReason) {
        self.init(infoCode: Self.infoCode(of: reason.problem), extraText: reason.description)
    }

    /// The error for an answer handed out as insecure, when its reason has a code of its own: 27 for NSEC3
    /// iterations above the limit; `nil` for the other reasons (an unsigned delegation is no error).
    init?(insecure reason: InsecureReason) {
        switch reason.cause {
        case .nsec3Iterations: self.init(infoCode: Self.unsupportedNSEC3Iterations, extraText: reason.detail)
        case .unsignedDelegation, .optOut, .unsupportedAlgorithm, .noTrustAnchor: return nil
        }
    }

    /// The INFO-CODE that says `problem`; 6 DNSSEC Bogus for every problem without a code of its own
    /// (a bad or malformed signature, a wrong signer, a revoked key, a validation cap reached).
    static func infoCode(of problem: BogusReason.Problem) -> UInt16 {
        switch problem {
        case .signaturesMissing: rrsigsMissing
        case .signatureExpired: signatureExpired
        case .signatureNotYetValid: signatureNotYetValid
        case .noMatchingKey, .noKeyMatchesDS, .dnskeyMissing: dnskeyMissing
        case .denialMissing, .dsMissingWithoutProof, .wildcardWithoutProof: nsecMissing
        case .wrongSigner, .malformedSignature, .malformedKey, .malformedDS, .notAZoneKey, .revokedKey, .badKeyProtocol,
             .labelsExceedOwner, .signatureInvalid, .noSupportedSignature, .capReached, .answerMissing:
            dnssecBogus
        }
    }

    /// The option as it sits in the OPT record's RDATA: OPTION-CODE, OPTION-LENGTH, INFO-CODE,
    /// EXTRA-TEXT (RFC 8914 §2), network byte order. Written by hand: ldns 1.8.3 has no EDE builder.
    var option: [UInt8] {
        let text = Array(extraText.utf8)
        let length = 2 + text.count
        return [UInt8(Self.optionCode >> 8), UInt8(Self.optionCode & 0xFF), UInt8(length >> 8), UInt8(length & 0xFF),
                UInt8(infoCode >> 8), UInt8(infoCode & 0xFF)] + text
    }
}
