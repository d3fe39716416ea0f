/// The caps on the work one resolution's validation may do, against KeyTrap (CVE-2023-50387: many keys
/// sharing a key tag, many signatures on one RRset, each pairing a costly check) — Unbound's
/// `val_sigcrypt` budgets in spirit. Past any cap the answer is bogus naming the cap (EDE 6).
public struct ValidationLimits: Sendable, Hashable {
    /// DNSKEYs tried for one RRSIG (those with its key tag and algorithm, in the RRset's order); also the
    /// DNSKEYs digested for one DS record, which names its key by tag and algorithm the same way.
    package var keysPerSignature = 4
    /// RRSIGs tried for one RRset; also the DS records of one DS RRset matched against the zone's keys.
    package var signaturesPerRRset = 8
    /// NSEC and NSEC3 records a negative answer (or a DS reply read for a no-DS proof) may carry: a proof needs at most 3 (RFC 5155 §7.2.1–7.2.6),
    /// while each is compared with every name of the proof, and each NSEC3 hashes them with its own salt and
    /// iterations (CVE-2023-50868: one signed NSEC3 RRset of a thousand records, one salt each).
    package var denialRecordsPerAnswer = 8
    /// Signature checks (ldns verifications) in one resolution, the whole chain included.
    package var checksPerResolution = 64
    /// DNSKEY and DS queries the chain may ask for in one resolution.
    package var chainQueries = 16

    package init() {}

    /// Which cap stopped a validation.
    public enum Cap: String, Sendable, Hashable, CustomStringConvertible {
        case keysPerSignature = "keys tried per signature"
        case signaturesPerRRset = "signatures tried per RRset"
        case checksPerResolution = "signature checks per resolution"
        case chainQueries = "chain queries per resolution"
        case denialRecordsPerAnswer = "NSEC and NSEC3 records per negative answer"

        public var description: String { rawValue }
    }
}

/// The signature checks left to one resolution (``ValidationLimits/checksPerResolution`` at the
/// start), spent by ``SignatureCheck`` one ldns verification at a time.
package struct ValidationBudget: Sendable, Hashable {
    package private(set) var checksLeft: Int
    package private(set) var checksSpent = 0

    package init(checks: Int) { checksLeft = checks }

    /// Takes one check; `false` when none is left.
    package mutating func spend() -> Bool {
        guard checksLeft > 0 else { return false }
        checksLeft -= 1
        checksSpent += 1
        return true
    }
}
