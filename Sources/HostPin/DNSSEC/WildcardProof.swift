/// The proof a wildcard expansion needs (RFC 4035 §5.3.4, RFC 5155 §8.8): a signed NSEC or NSEC3 showing
/// that the next closer name below the wildcard's closest encloser (and, for NSEC, the name asked for)
/// does not exist, so the wildcard was rightly expanded.
package enum WildcardProof {
    /// What `authority` proves of the expansion of `wildcard` (`*.` plus the closest encloser) into
    /// `name`: proven when one of its NSEC RRsets covers both `name` and the next closer name, or one of
    /// its NSEC3 RRsets covers the next closer name's hash (hashed with that record's own parameters;
    /// another hash algorithm or more than ``NSEC3Record/maxIterations`` iterations never covers),
    /// verified with the zone's `keys`.
    ///
    /// Coverage is ``NSECRecord/covers(_:_:)``'s and ``NSEC3Record/covers(_:)``'s; HostPin adds that the
    /// record lies in the zone, and verifies its signature (ldns's denial functions verify none).
    ///
    /// - Returns: ``Outcome/optOut`` when the NSEC3 cover has the opt-out flag;
    ///   ``Outcome/iterationsAboveLimit`` when no record proves it and the zone's NSEC3 RRsets
    ///   in `authority`, each verified, all exceed ``NSEC3Record/maxIterations`` (RFC 9276: insecure).
    package static func provesNoCloserMatch(name: WireName, wildcard: WireName, zone: WireName, keys: [DNSSECRecord],
                                            authority: [RRset], now: Int64, limits: ValidationLimits,
                                            budget: inout ValidationBudget) -> Outcome {
        let encloserLabels = wildcard.labelCount - 1
        guard encloserLabels < name.labelCount else { return .missing }
        let nextCloser = name.suffix(labels: encloserLabels + 1)
        for proof in authority where proof.records.count == 1 {
            let record = proof.records[0]
            let covers = switch proof.type {
            case DNSSECRecord.Kind.nsec:
                zone.isAncestorOrSelf(of: proof.owner) && NSECRecord.covers(record, name) && NSECRecord.covers(record, nextCloser)
            case DNSSECRecord.Kind.nsec3:
                proof.owner.parent == zone && NSEC3Record(record)?.covers(nextCloser) == true
            default: false
            }
            guard covers else { continue }
            if case .verified = SignatureCheck.verify(proof, zone: zone, keys: keys, now: now, limits: limits, budget: &budget) {
                // An opt-out cover leaves room for an unsigned delegation at the next closer name, which
                // would make the expansion wrong (RFC 5155 §9.2; Unbound and delv both say insecure).
                return proof.type == DNSSECRecord.Kind.nsec3 && NSEC3Record(record)?.optOut == true ? .optOut : .proven
            }
        }
        let nsec3s = authority.filter { $0.type == DNSSECRecord.Kind.nsec3 && $0.owner.parent == zone && $0.records.count == 1 }
        let tooManyIterations = { (set: RRset) in
            NSEC3Record(set.records[0]).map { $0.hashAlgorithm == 1 && $0.iterations > NSEC3Record.maxIterations } == true
        }
        guard !nsec3s.isEmpty, nsec3s.allSatisfy(tooManyIterations) else { return .missing }
        for set in nsec3s {
            guard case .verified = SignatureCheck.verify(set, zone: zone, keys: keys, now: now, limits: limits, budget: &budget)
            else { return .missing }
        }
        return .iterationsAboveLimit
    }

    /// What the authority section shows about a wildcard expansion.
    package enum Outcome: Sendable, Hashable {
        /// No closer name exists: the expansion stands.
        case proven
        /// The next closer name's NSEC3 cover has the opt-out flag: insecure.
        case optOut
        /// Only signed NSEC3 records with too many iterations to hash: insecure.
        case iterationsAboveLimit
        /// No signed proof: bogus.
        case missing
    }
}
