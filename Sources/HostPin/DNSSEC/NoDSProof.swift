/// What a parent's answer to a DS query for `name` proves (RFC 4035 §5.2, RFC 6840 §4.1; Unbound's
/// `val_nsec_prove_nodata_dsreply`), NSEC only: NSEC3 (RFC 5155 §8.6) is the next step.
package enum NoDSProof: Sendable, Hashable {
    /// A DS RRset exists: `name` is a signed zone cut, validated through ``AnswerValidation``'s chain.
    case ds
    /// A signed NSEC at `name` with NS and without DS or SOA: an unsigned delegation, so everything at and
    /// below `name` is insecure.
    case insecureDelegation
    /// A signed NSEC at `name` without NS, or one proving `name` an empty non-terminal: no zone cut at
    /// `name`; the parent's zone goes on below it.
    case noCut
    case bogus(BogusReason)

    /// Reads `answer` (the answer and authority records of the DS query) for `name`, with the parent
    /// zone `zone` and its validated `keys`.
    ///
    /// An NSEC with SOA at `name` comes from the child's apex, not the parent (RFC 6840 §4.1's
    /// parent-side rule read from the other end): it proves nothing about the DS and is bogus here, as is
    /// an NSEC listing DS beside an empty DS answer.
    package static func read(_ answer: [RRset], name: WireName, zone: WireName, keys: [DNSSECRecord], now: Int64,
                             limits: ValidationLimits, budget: inout ValidationBudget) -> NoDSProof {
        if answer.contains(where: { $0.owner == name && $0.type == DNSSECRecord.Kind.ds && !$0.records.isEmpty }) {
            return .ds
        }
        guard let nsec = answer.first(where: { $0.owner == name && $0.type == DNSSECRecord.Kind.nsec }),
              nsec.records.count == 1, let record = nsec.records.first
        else { return emptyNonTerminal(answer, name: name, zone: zone, keys: keys, now: now, limits: limits, budget: &budget) }
        switch SignatureCheck.verify(nsec, zone: zone, keys: keys, now: now, limits: limits, budget: &budget) {
        case .bogus(let reason): return .bogus(reason)
        case .unsupported: return .bogus(BogusReason(nsec, problem: .noSupportedSignature))
        case .verified: break
        }
        let lists = { (type: UInt16) in NSECRecord.lists(record, type: type) }
        if lists(DNSSECRecord.Kind.ds) || lists(DNSSECRecord.Kind.soa) {
            return .bogus(BogusReason(nsec, problem: .dsMissingWithoutProof))
        }
        return lists(DNSSECRecord.Kind.ns) ? .insecureDelegation : .noCut
    }

    /// No NSEC at `name`: an empty non-terminal (RFC 4592 §2.2.2) is proven by a signed NSEC covering it
    /// whose next name lies below it — names exist under `name`, none at it, so no zone cut is there.
    private static func emptyNonTerminal(_ answer: [RRset], name: WireName, zone: WireName, keys: [DNSSECRecord], now: Int64,
                                         limits: ValidationLimits, budget: inout ValidationBudget) -> NoDSProof {
        for nsec in answer where nsec.type == DNSSECRecord.Kind.nsec && nsec.records.count == 1 && zone.isAncestorOrSelf(of: nsec.owner) {
            let record = nsec.records[0]
            guard NSECRecord.covers(record, name), let next = WireName.read(record.rdata)?.name,
                  next != name, name.isAncestorOrSelf(of: next)
            else { continue }
            if case .verified = SignatureCheck.verify(nsec, zone: zone, keys: keys, now: now, limits: limits, budget: &budget) {
                return .noCut
            }
        }
        return .bogus(BogusReason(rrset: "\(name) DS", problem: .dsMissingWithoutProof))
    }
}
