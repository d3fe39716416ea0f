/// The proof a wildcard expansion needs (RFC 4035 §5.3.4): a signed NSEC showing that neither the name
/// asked for nor the next closer name below the wildcard's closest encloser exists. NSEC3 proofs
/// (RFC 5155 §8.8) are not checked yet: an expansion in an NSEC3 zone stays bogus.
package enum WildcardProof {
    /// Whether one of `authority`'s NSEC RRsets, verified with the zone's `keys`, covers both `name` and the
    /// next closer name of the expansion of `wildcard` (`*.` plus the closest encloser).
    ///
    /// Coverage is ``NSECRecord/covers(_:_:)``'s; HostPin adds that the NSEC lies in the zone, and verifies
    /// its signature (ldns's denial functions verify none).
    package static func provesNoCloserMatch(name: WireName, wildcard: WireName, zone: WireName, keys: [DNSSECRecord],
                                            authority: [RRset], now: Int64, limits: ValidationLimits,
                                            budget: inout ValidationBudget) -> Bool {
        let encloserLabels = wildcard.labelCount - 1
        guard encloserLabels < name.labelCount else { return false }
        let nextCloser = name.suffix(labels: encloserLabels + 1)
        for nsec in authority where nsec.type == DNSSECRecord.Kind.nsec && zone.isAncestorOrSelf(of: nsec.owner) {
            guard nsec.records.count == 1, let record = nsec.records.first,
                  NSECRecord.covers(record, name), NSECRecord.covers(record, nextCloser)
            else { continue }
            if case .verified = SignatureCheck.verify(nsec, zone: zone, keys: keys, now: now, limits: limits, budget: &budget) {
                return true
            }
        }
        return false
    }
}
