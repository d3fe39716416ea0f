/// The proof a wildcard expansion needs (RFC 4035 §5.3.4, RFC 5155 §8.8): a signed NSEC or NSEC3 showing
/// that the next closer name below the wildcard's closest encloser (and, for NSEC, the name asked for)
/// does not exist, so the wildcard was rightly expanded.
package enum WildcardProof {
    /// Whether one of `authority`'s NSEC RRsets covers both `name` and the next closer name of the
    /// expansion of `wildcard` (`*.` plus the closest encloser), or one of its NSEC3 RRsets covers the next
    /// closer name's hash (hashed with that record's own parameters; another hash algorithm or more than
    /// ``NSEC3Record/maxIterations`` iterations never covers), verified with the zone's `keys`.
    ///
    /// Coverage is ``NSECRecord/covers(_:_:)``'s and ``NSEC3Record/covers(_:)``'s; HostPin adds that the
    /// record lies in the zone, and verifies its signature (ldns's denial functions verify none).
    package static func provesNoCloserMatch(name: WireName, wildcard: WireName, zone: WireName, keys: [DNSSECRecord],
                                            authority: [RRset], now: Int64, limits: ValidationLimits,
                                            budget: inout ValidationBudget) -> Bool {
        let encloserLabels = wildcard.labelCount - 1
        guard encloserLabels < name.labelCount else { return false }
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
                return true
            }
        }
        return false
    }
}
