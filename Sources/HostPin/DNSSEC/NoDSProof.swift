/// What a parent's answer to a DS query for `name` proves (RFC 4035 §5.2, RFC 5155 §8.6, RFC 6840 §4.1
/// and §4.4; Unbound's `val_nsec_prove_nodata_dsreply` and `nsec3_prove_nods`).
package enum NoDSProof: Sendable, Hashable {
    /// A DS RRset exists: `name` is a signed zone cut, validated through ``AnswerValidation``'s chain.
    case ds
    /// A signed proof that `name` is delegated without DS, so everything at and below `name` is insecure.
    case insecureDelegation(Proof)
    /// A signed NSEC or NSEC3 at `name` without NS, or one proving `name` an empty non-terminal: no zone
    /// cut at `name`; the parent's zone goes on below it.
    case noCut
    /// Only signed NSEC3 records above ``NSEC3Record/maxIterations`` iterations: not hashed, insecure
    /// (RFC 9276).
    case iterationsAboveLimit
    case bogus(BogusReason)

    /// Which record proved an unsigned delegation.
    package enum Proof: Sendable, Hashable, CustomStringConvertible {
        /// An NSEC at the name with NS, without DS or SOA.
        case nsec
        /// An NSEC3 matching the name with NS, without DS or SOA.
        case nsec3
        /// No NSEC3 at the name: the closest encloser proof, whose NSEC3 covering the next closer name
        /// has the opt-out flag (RFC 5155 §6: the span may hold unsigned delegations without NSEC3s).
        case nsec3OptOut

        package var description: String {
            switch self {
            case .nsec: "signed NSEC"
            case .nsec3: "signed NSEC3"
            case .nsec3OptOut: "signed NSEC3 with opt-out"
            }
        }
    }

    /// Reads `answer` (the answer and authority records of the DS query) for `name`, with the parent
    /// zone `zone` and its validated `keys`. Only the NSEC or NSEC3 RRsets the proof uses are verified.
    ///
    /// An NSEC or NSEC3 with SOA at `name` comes from the child's apex, not the parent (RFC 6840 §4.1's
    /// parent-side rule read from the other end): it proves nothing about the DS and is bogus here, as is
    /// one listing DS beside an empty DS answer.
    package static func read(_ answer: [RRset], name: WireName, zone: WireName, keys: [DNSSECRecord], now: Int64,
                             limits: ValidationLimits, budget: inout ValidationBudget) -> NoDSProof {
        if answer.contains(where: { $0.owner == name && $0.type == DNSSECRecord.Kind.ds && !$0.records.isEmpty }) {
            return .ds
        }
        // The NSEC3s are hashed against `name` and its ancestors before any is verified: as many as a
        // negative answer may carry (CVE-2023-50868).
        let denials = answer.filter { $0.type == DNSSECRecord.Kind.nsec || $0.type == DNSSECRecord.Kind.nsec3 }
        guard denials.reduce(0, { $0 + $1.records.count }) <= limits.denialRecordsPerAnswer else {
            return .bogus(BogusReason(rrset: "\(name) DS", problem: .capReached(.denialRecordsPerAnswer)))
        }
        guard let nsec = answer.first(where: { $0.owner == name && $0.type == DNSSECRecord.Kind.nsec }),
              nsec.records.count == 1, let record = nsec.records.first
        else {
            if answer.contains(where: { $0.type == DNSSECRecord.Kind.nsec3 }) {
                return nsec3Proof(answer, name: name, zone: zone, keys: keys, now: now, limits: limits, budget: &budget)
            }
            return emptyNonTerminal(answer, name: name, zone: zone, keys: keys, now: now, limits: limits, budget: &budget)
        }
        if let reason = verify(nsec, zone: zone, keys: keys, now: now, limits: limits, budget: &budget) { return .bogus(reason) }
        let lists = { (type: UInt16) in NSECRecord.lists(record, type: type) }
        if lists(DNSSECRecord.Kind.ds) || lists(DNSSECRecord.Kind.soa) {
            return .bogus(BogusReason(nsec, problem: .dsMissingWithoutProof))
        }
        return lists(DNSSECRecord.Kind.ns) ? .insecureDelegation(.nsec) : .noCut
    }

    /// Under an NSEC3 parent (RFC 5155 §8.6): the NSEC3 matching `name` — NS without DS or SOA is an
    /// unsigned delegation, no NS no cut (an empty non-terminal has a matching NSEC3 with an empty
    /// bitmap) — or, when none matches, the closest encloser proof whose next closer cover has the
    /// opt-out flag (RFC 6840 §4.4). Records of another hash algorithm, or whose owner is not directly
    /// below `zone`, are ignored.
    private static func nsec3Proof(_ answer: [RRset], name: WireName, zone: WireName, keys: [DNSSECRecord], now: Int64,
                                   limits: ValidationLimits, budget: inout ValidationBudget) -> NoDSProof {
        let sets = answer.filter { $0.type == DNSSECRecord.Kind.nsec3 && $0.owner.parent == zone && $0.records.count == 1 }
        let nsec3s = sets.compactMap { NSEC3Record($0.records[0]) }.filter { $0.hashAlgorithm == 1 }
        func rrset(of nsec3: NSEC3Record) -> RRset? { sets.first { $0.owner == nsec3.record.owner } }
        if let match = nsec3s.first(where: { $0.matches(name) }), let set = rrset(of: match) {
            if let reason = verify(set, zone: zone, keys: keys, now: now, limits: limits, budget: &budget) { return .bogus(reason) }
            if match.lists(DNSSECRecord.Kind.ds) || match.lists(DNSSECRecord.Kind.soa) {
                return .bogus(BogusReason(set, problem: .dsMissingWithoutProof))
            }
            return match.lists(DNSSECRecord.Kind.ns) ? .insecureDelegation(.nsec3) : .noCut
        }
        guard let proof = DenialProof.closestEncloserProof(of: name, nsec3s: nsec3s), zone.isAncestorOrSelf(of: proof.encloser) else {
            guard !nsec3s.isEmpty, nsec3s.allSatisfy({ $0.iterations > NSEC3Record.maxIterations }) else {
                return .bogus(BogusReason(rrset: "\(name) DS", problem: .dsMissingWithoutProof))
            }
            // Insecure only on the zone's own signed word: an unsigned record must not downgrade a delegation.
            for set in sets where set.records.first.flatMap(NSEC3Record.init)?.hashAlgorithm == 1 {
                if let reason = verify(set, zone: zone, keys: keys, now: now, limits: limits, budget: &budget) { return .bogus(reason) }
            }
            return .iterationsAboveLimit
        }
        for used in [proof.encloserMatch, proof.nextCloserCover] {
            guard let set = rrset(of: used) else { return .bogus(BogusReason(rrset: "\(name) DS", problem: .dsMissingWithoutProof)) }
            if let reason = verify(set, zone: zone, keys: keys, now: now, limits: limits, budget: &budget) { return .bogus(reason) }
        }
        guard proof.nextCloserCover.optOut else {
            // A cover without opt-out proves `name` absent, so no DS query should have found a cut there.
            return .bogus(BogusReason(rrset: "\(name) DS", problem: .dsMissingWithoutProof))
        }
        return .insecureDelegation(.nsec3OptOut)
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
            if verify(nsec, zone: zone, keys: keys, now: now, limits: limits, budget: &budget) == nil { return .noCut }
        }
        return .bogus(BogusReason(rrset: "\(name) DS", problem: .dsMissingWithoutProof))
    }

    /// The proof's own signature (neither ldns denial function verifies one): `nil` when it verifies.
    private static func verify(_ set: RRset, zone: WireName, keys: [DNSSECRecord], now: Int64,
                               limits: ValidationLimits, budget: inout ValidationBudget) -> BogusReason? {
        switch SignatureCheck.verify(set, zone: zone, keys: keys, now: now, limits: limits, budget: &budget) {
        case .bogus(let reason): reason
        case .unsupported: BogusReason(set, problem: .noSupportedSignature)
        case .verified: nil
        }
    }
}
