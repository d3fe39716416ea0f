import CLDNS

/// Verifies RRSIGs over RRsets — the one place that calls ldns's DNSSEC cryptography, as Unbound's
/// `val_sigcrypt` is for its validator.
///
/// ldns (`ldns_verify_rrsig_time`) checks the signature bytes, the validity window against the time it
/// is given, and that key tag and algorithm match; ldns 1.8.3 does not check, so this type does before
/// calling it (each with a test in `DNSSECSignatureCheckTests`):
/// - the DNSKEY has the ZONE flag and not the REVOKE flag, and protocol 3 (RFC 4034 §2.1, RFC 5011 §3);
/// - the RRSIG's signer is the zone apex being validated and an ancestor-or-self of the owner
///   (RFC 4035 §5.3.1);
/// - the Labels field is at most the owner's label count; fewer labels is a wildcard expansion,
///   reported in ``Verified/wildcard`` so the caller can require its no-closer-match proof (§5.3.4);
/// - time with a clock-skew allowance: a signature is taken from 1 h before its inception until 1 h
///   after its expiration (``clockSkew``); ldns is handed the check time clamped into the signature's
///   own window, so its own time check passes exactly when HostPin's does;
/// - the TTL: capped by the RRSIG's original TTL and by the seconds left until its expiration
///   (RFC 4035 §5.3.3);
/// - one key at a time, at most ``ValidationLimits/keysPerSignature`` keys per signature and
///   ``ValidationLimits/signaturesPerRRset`` signatures per RRset, each ldns call spending the
///   resolution's ``ValidationBudget`` (KeyTrap, CVE-2023-50387). The keylist functions are not used:
///   they try every key with the tag, even after one matched.
package enum SignatureCheck {
    /// Signatures are accepted this long before their inception and after their expiration (clock
    /// skew between the signer, the upstream and this host), in seconds.
    package static let clockSkew: UInt32 = 3600

    /// Algorithms HostPin verifies (RFC 8624 §3.1 MUST/RECOMMENDED, less the SHA-1 ones): RSASHA256 (8),
    /// RSASHA512 (10), ECDSAP256SHA256 (13), ECDSAP384SHA384 (14), ED25519 (15), ED448 (16) — each only
    /// when the ldns build supports it (`ldns_key_algo_supported`). Others make a zone insecure (RFC 4035 §5.2).
    package static func isSupported(algorithm: UInt8) -> Bool {
        [8, 10, 13, 14, 15, 16].contains(algorithm) && ldns_key_algo_supported(Int32(algorithm)) != 0
    }

    /// What a verified RRset tells the caller.
    package struct Verified: Sendable, Hashable {
        /// The key tag of the DNSKEY that verified it.
        package let keyTag: UInt16
        /// The TTL to keep the RRset for, in seconds: the smallest of the records' TTLs, the RRSIG's
        /// original TTL and the seconds left to its expiration.
        package let ttl: UInt32
        /// For a wildcard expansion, the wildcard that was expanded (`*.wild.example.test.`);
        /// `nil` for an owner that matched by itself.
        package let wildcard: WireName?
    }

    /// The outcome for one RRset.
    package enum Outcome: Sendable, Hashable {
        case verified(Verified)
        /// No RRSIG with a supported algorithm, while at least one has another: unverifiable.
        case unsupported
        case bogus(BogusReason)
    }

    /// Verifies `rrset` with the DNSKEYs `keys` of `zone`, trying its RRSIGs in order until one verifies.
    ///
    /// - Parameters:
    ///   - zone: The apex of the zone the RRset is validated in; every RRSIG must name it as signer.
    ///   - keys: DNSKEY records, already trusted (or, for a DNSKEY RRset, those a DS matched).
    ///   - now: The check time, seconds since 1970.
    ///   - limits: The per-signature and per-RRset caps.
    ///   - budget: The resolution's checks; each ldns verification spends one.
    /// - Returns: The first verified signature's facts; otherwise bogus with the first RRSIG's problem
    ///   (or the cap that stopped the checks), or ``Outcome/unsupported`` when every RRSIG signed by the
    ///   zone uses an algorithm HostPin does not verify.
    package static func verify(_ rrset: RRset, zone: WireName, keys: [DNSSECRecord], now: Int64,
                               limits: ValidationLimits, budget: inout ValidationBudget) -> Outcome {
        guard !rrset.signatures.isEmpty else { return .bogus(BogusReason(rrset, problem: .signaturesMissing)) }
        var firstProblem: BogusReason?
        var sawSupported = false
        var tried = 0
        for signature in rrset.signatures {
            guard let fields = RRSIGData(signature.rdata) else {
                firstProblem = firstProblem ?? BogusReason(rrset, problem: .malformedSignature)
                continue
            }
            guard fields.signer == zone, fields.signer.isAncestorOrSelf(of: rrset.owner) else {
                firstProblem = firstProblem ?? BogusReason(rrset, keyTag: fields.keyTag, problem: .wrongSigner(fields.signer))
                continue
            }
            guard isSupported(algorithm: fields.algorithm) else { continue }
            sawSupported = true
            guard tried < limits.signaturesPerRRset else {
                return .bogus(BogusReason(rrset, problem: .capReached(.signaturesPerRRset)))
            }
            tried += 1
            switch verify(rrset, signature: signature, fields: fields, keys: keys, now: now, limits: limits, budget: &budget) {
            case .success(let verified): return .verified(verified)
            case .failure(let reason):
                if case .capReached(.checksPerResolution) = reason.problem { return .bogus(reason) }
                firstProblem = firstProblem ?? reason
            }
        }
        if !sawSupported, firstProblem == nil { return .unsupported }
        return .bogus(firstProblem ?? BogusReason(rrset, problem: .noSupportedSignature))
    }

    /// One RRSIG against the keys with its tag and algorithm, one key at a time.
    private static func verify(_ rrset: RRset, signature: DNSSECRecord, fields: RRSIGData, keys: [DNSSECRecord],
                               now: Int64, limits: ValidationLimits,
                               budget: inout ValidationBudget) -> Result<Verified, BogusReason> {
        let ownerLabels = rrset.owner.labelCountWithoutWildcard
        guard Int(fields.labels) <= ownerLabels else {
            return .failure(BogusReason(rrset, keyTag: fields.keyTag, problem: .labelsExceedOwner(labels: fields.labels)))
        }
        let nowSerial = UInt32(truncatingIfNeeded: now)
        // RFC 4034 §3.1.5 serial arithmetic: differences taken modulo 2^32, read as signed.
        let sinceInception = Int64(Int32(bitPattern: nowSerial &- fields.inception))
        let untilExpiration = Int64(Int32(bitPattern: fields.expiration &- nowSerial))
        guard sinceInception >= -Int64(clockSkew) else {
            return .failure(BogusReason(rrset, keyTag: fields.keyTag, problem: .signatureNotYetValid(inception: fields.inception)))
        }
        guard untilExpiration >= -Int64(clockSkew) else {
            return .failure(BogusReason(rrset, keyTag: fields.keyTag, problem: .signatureExpired(expiration: fields.expiration)))
        }
        // Inside the allowance but outside the signature's own window: ldns gets the nearest edge.
        let checkTime = sinceInception < 0 ? now - sinceInception : untilExpiration < 0 ? now + untilExpiration : now

        let candidates = keys.filter {
            guard let key = DNSKEYData($0.rdata) else { return false }
            return $0.owner == fields.signer && key.keyTag == fields.keyTag && key.algorithm == fields.algorithm
        }
        guard !candidates.isEmpty else {
            return .failure(BogusReason(rrset, keyTag: fields.keyTag,
                                        problem: .noMatchingKey(keyTag: fields.keyTag, algorithm: fields.algorithm)))
        }
        var firstProblem: BogusReason?
        for (index, key) in candidates.enumerated() {
            guard index < limits.keysPerSignature else {
                return .failure(BogusReason(rrset, keyTag: fields.keyTag, problem: .capReached(.keysPerSignature)))
            }
            let data = DNSKEYData(key.rdata)!
            let problem: BogusReason.Problem? =
                !data.isZoneKey ? .notAZoneKey : data.isRevoked ? .revokedKey
                : data.protocolField != 3 ? .badKeyProtocol(data.protocolField) : nil
            if let problem {
                firstProblem = firstProblem ?? BogusReason(rrset, keyTag: fields.keyTag, problem: problem)
                continue
            }
            guard budget.spend() else {
                return .failure(BogusReason(rrset, keyTag: fields.keyTag, problem: .capReached(.checksPerResolution)))
            }
            switch cryptoCheck(rrset, signature: signature, key: key, at: checkTime) {
            case nil:
                let leftToExpiry = UInt32(max(0, untilExpiration))
                let ttl = ([fields.originalTTL, leftToExpiry] + rrset.records.map(\.ttl)).min()!
                let wildcard = Int(fields.labels) < ownerLabels
                    ? WireName(labels: [[UInt8(ascii: "*")]] + rrset.owner.suffix(labels: Int(fields.labels)).labels) : nil
                return .success(Verified(keyTag: fields.keyTag, ttl: ttl, wildcard: wildcard))
            case let problem?:
                firstProblem = firstProblem ?? BogusReason(rrset, keyTag: fields.keyTag, problem: problem)
            }
        }
        return .failure(firstProblem!)
    }

    /// ldns's verdict on one signature by one key at `time`; `nil` when it verifies.
    private static func cryptoCheck(_ rrset: RRset, signature: DNSSECRecord, key: DNSSECRecord, at time: Int64) -> BogusReason.Problem? {
        // ldns 1.8.3 reads the list's first record without a check: an empty list (an RRSIG sent without
        // the RRset it covers) dereferenced NULL and ended the process.
        guard !rrset.records.isEmpty else { return .signatureInvalid("no records under the RRSIG") }
        guard let rrsig = signature.ldnsRecord() else { return .malformedSignature }
        defer { ldns_rr_free(rrsig) }
        guard let dnskey = key.ldnsRecord() else { return .malformedKey }
        defer { ldns_rr_free(dnskey) }
        guard let list = ldns_rr_list_new() else { return .signatureInvalid("out of memory") }
        defer { ldns_rr_list_deep_free(list) }
        for record in rrset.records {
            guard let rr = record.ldnsRecord() else { return .signatureInvalid("a record ldns cannot read") }
            _ = ldns_rr_list_push_rr(list, rr)
        }
        let status = ldns_verify_rrsig_time(list, rrsig, dnskey, time_t(time))
        guard status != LDNS_STATUS_OK else { return nil }
        return .signatureInvalid(String(cString: ldns_get_errorstr_by_id(status)))
    }
}
