/// The validation of one answer — an RRset and the CNAME chain that leads to it, or NXDOMAIN/NODATA — as
/// a pure state machine (Unbound's `validator.c` runs the same steps as module events): its events are
/// the RRsets fetched, its outputs a ``ChainRequest`` to fetch or a ``DNSSECVerdict``. It does no I/O and
/// reads no clock, so tests drive it with RRsets from zone files.
///
/// The chain is built bottom-up: each RRset's RRSIG names its zone Z; Z's DNSKEY RRset is fetched and
/// trusted through the anchor at Z, or through Z's DS RRset, whose own RRSIG names the parent zone,
/// whose keys are found the same way, up to the closest trust anchor. Validated DNSKEY sets are kept in
/// ``zoneKeys`` for the rest of the resolution (a ``KeyCache`` keeps them across resolutions).
///
/// An RRset without RRSIGs is insecure only below an unsigned delegation proven by a signed NSEC or
/// NSEC3 (``NoDSProof``: the record matching the delegation, or an NSEC3 opt-out span covering it), found
/// by asking for DS records from the anchor down. A wildcard expansion needs its signed no-closer-match
/// proof, NSEC or NSEC3 (``WildcardProof``). A negative answer (``Claim``) has its NSEC/NSEC3 and SOA
/// RRsets verified, then its ``DenialProof``: NXDOMAIN, NODATA and wildcard NODATA, under NSEC or NSEC3.
/// An NSEC3 proof that stands only through an opt-out span (a wildcard expansion, NXDOMAIN, wildcard
/// NODATA, NODATA for DS) is insecure (RFC 5155 §9.2, as Unbound; delv agrees for the expansion only).
package struct AnswerValidation: Sendable {
    /// What the driver does next.
    package enum Step: Sendable, Hashable {
        case fetch(ChainRequest)
        case verdict(DNSSECVerdict)
    }

    /// What the upstream's answer claims.
    package enum Claim: Sendable, Hashable {
        /// An RRset of the asked type (after any CNAMEs).
        case answer
        /// NXDOMAIN: the name (at the end of any CNAMEs) does not exist.
        case nxdomain
        /// NODATA: the name exists without the asked type.
        case nodata
    }

    private let claim: Claim
    private let question: WireName
    private let answer: [RRset]
    private let authority: [RRset]
    private let anchors: TrustAnchors
    private let now: Int64
    private let limits: ValidationLimits
    private var budget: ValidationBudget
    private var fetched: [ChainRequest: [RRset]] = [:]
    private var requests = 0
    /// TTLs of the chain's RRsets verified so far, by position, so a later step does not check them again.
    private var verifiedTTLs: [Int: UInt32] = [:]
    /// The zone whose keys verified each of the chain's RRsets, by position: a denial counts only from
    /// the zone that holds the name.
    private var verifiedSigners: [Int: WireName] = [:]
    /// Why the chain's RRsets found insecure so far are, by position.
    private var insecurePositions: [Int: InsecureReason] = [:]
    /// The DNSKEY sets validated so far in this resolution, by zone apex.
    package private(set) var zoneKeys: [WireName: ZoneKeys]
    /// The DNSKEY sets this resolution settled itself (not those handed in), for a ``KeyCache`` to keep.
    package private(set) var validatedKeys: [WireName: ZoneKeys] = [:]

    /// - Parameters:
    ///   - name: The name asked for (QNAME).
    ///   - type: The type asked for (A or AAAA; any type whose answer is an RRset works).
    ///   - answer: The answer section's records, RRSIGs included.
    ///   - authority: The authority section's records (a wildcard expansion's or a negative answer's NSEC
    ///     proof, a negative answer's SOA).
    ///   - claim: Whether the answer claims the RRset, NXDOMAIN or NODATA.
    ///   - anchors: The trust anchors.
    ///   - knownKeys: Validated DNSKEY sets from a ``KeyCache``.
    ///   - now: The check time, seconds since 1970.
    package init(name: WireName, type: UInt16, answer: [DNSSECRecord], authority: [DNSSECRecord] = [],
                 claim: Claim = .answer, anchors: TrustAnchors, knownKeys: [WireName: ZoneKeys] = [:], now: Int64,
                 limits: ValidationLimits = ValidationLimits()) {
        self.claim = claim
        self.question = name
        self.questionType = type
        self.answer = RRset.group(answer)
        self.authority = RRset.group(authority)
        self.anchors = anchors
        self.now = now
        self.limits = limits
        self.budget = ValidationBudget(checks: limits.checksPerResolution)
        self.zoneKeys = knownKeys
    }

    private let questionType: UInt16

    /// The signature checks spent so far.
    package var checksSpent: Int { budget.checksSpent }

    /// The first step.
    package mutating func start() -> Step { advance() }

    /// Hands in the answer section's records for `request` (empty when the upstream had none) and
    /// takes the next step.
    package mutating func received(_ request: ChainRequest, records: [DNSSECRecord]) -> Step {
        fetched[request] = RRset.group(records)
        return advance()
    }

    /// One step of progress: a request for the first thing missing, or the verdict once nothing is.
    private mutating func advance() -> Step {
        guard anchors.closest(to: question) != nil else { return .verdict(.indeterminate) }
        var chain: [RRset]
        let end: WireName
        switch cnameChain() {
        case .success(let found): (chain, end) = (found, found.last?.owner ?? question)
        case .failure(let reason):
            guard claim != .answer else { return .verdict(.bogus(reason.reason)) }
            (chain, end) = reason.chain
        }
        if claim != .answer {
            let denials = authority.filter { $0.type == DNSSECRecord.Kind.nsec || $0.type == DNSSECRecord.Kind.nsec3 }
            guard denials.reduce(0, { $0 + $1.records.count }) <= limits.denialRecordsPerAnswer else {
                let rrset = denials.max { $0.records.count < $1.records.count }!
                return .verdict(.bogus(BogusReason(rrset, problem: .capReached(.denialRecordsPerAnswer))))
            }
            // A negative answer's own RRsets: the NSECs of its proof and the zone's SOA, each to be verified.
            // NSEC3 records of another hash algorithm are dropped before ldns sees them (RFC 5155 §8.1).
            chain += authority.filter { $0.type == DNSSECRecord.Kind.nsec || $0.type == DNSSECRecord.Kind.soa }
            chain += authority.filter { $0.type == DNSSECRecord.Kind.nsec3 && $0.records.allSatisfy { NSEC3Record($0)?.hashAlgorithm == 1 } }
        }
        var ttls = SecureTTLs()
        var insecurity: InsecureReason?
        for (position, rrset) in chain.enumerated() {
            if let known = verifiedTTLs[position] {
                ttls.add(known, owner: rrset.owner, type: rrset.type)
                continue
            }
            if let why = insecurePositions[position] {
                insecurity = insecurity ?? why
                continue
            }
            guard anchors.closest(to: rrset.owner) != nil else { return .verdict(.indeterminate) }
            guard let signer = rrset.signatures.lazy.compactMap({ RRSIGData($0.rdata)?.signer })
                .first(where: { $0.isAncestorOrSelf(of: rrset.owner) })
            else {
                guard rrset.signatures.isEmpty else { return .verdict(.bogus(BogusReason(rrset, problem: .malformedSignature))) }
                // Unsigned: insecure only below a proven unsigned delegation (a missing RRSIG proves nothing).
                switch unsignedDelegation(above: rrset) {
                case .need(let request): return fetch(request, for: rrset)
                case .known(.insecure(let why)):
                    insecurity = insecurity ?? why
                    insecurePositions[position] = why
                    continue
                case .known(.bogus(let reason)): return .verdict(.bogus(reason))
                case .known(.secure): return .verdict(.bogus(BogusReason(rrset, problem: .signaturesMissing)))
                }
            }
            switch keys(of: signer) {
            case .need(let request):
                return fetch(request, for: rrset)
            case .known(.bogus(let reason)):
                return .verdict(.bogus(reason))
            case .known(.insecure(let why)):
                insecurity = insecurity ?? why
                insecurePositions[position] = why
                continue
            case .known(.secure(let keys, let keysTTL)):
                switch SignatureCheck.verify(rrset, zone: signer, keys: keys, now: now, limits: limits, budget: &budget) {
                case .bogus(let reason):
                    return .verdict(.bogus(reason))
                case .unsupported:
                    return .verdict(.bogus(BogusReason(rrset, problem: .noSupportedSignature)))
                case .verified(let verified):
                    if let wildcard = verified.wildcard {
                        let proof = WildcardProof.provesNoCloserMatch(name: rrset.owner, wildcard: wildcard, zone: signer, keys: keys,
                                                                      authority: authority, now: now, limits: limits, budget: &budget)
                        switch proof {
                        case .proven: break
                        case .optOut, .iterationsAboveLimit:
                            let why = proof == .optOut
                                ? InsecureReason(.optOut, "\(rrset.owner) is a wildcard expansion in an NSEC3 opt-out span (RFC 5155 §9.2)")
                                : InsecureReason(.nsec3Iterations,
                                                 "NSEC3 iterations above \(NSEC3Record.maxIterations) (RFC 9276) in \(signer)'s wildcard proof")
                            insecurity = insecurity ?? why
                            insecurePositions[position] = why
                            continue
                        case .missing:
                            return .verdict(.bogus(BogusReason(rrset, keyTag: verified.keyTag, problem: .wildcardWithoutProof)))
                        }
                    }
                    // Each RRset is capped by its own signature (RFC 4035 §5.3.3) and, more strictly than
                    // the RFC asks, by the validated keys that verified it: an answer is not kept past the
                    // chain that vouches for it. Other RRsets of the answer do not cap it.
                    let verifiedTTL = min(verified.ttl, keysTTL)
                    verifiedTTLs[position] = verifiedTTL
                    verifiedSigners[position] = signer
                    ttls.add(verifiedTTL, owner: rrset.owner, type: rrset.type)
                }
            }
        }
        if let insecurity { return .verdict(.insecure(why: insecurity)) }
        if claim != .answer {
            // Only the name's own zone (or an ancestor, whose delegation NSECs DenialProof reads apart) speaks
            // for it: an NSEC3 lies at a hash label under its signer, and an NSEC's or NSEC3's signer is an
            // ancestor-or-self of the name (RFC 4035 §5.4, RFC 5155 §8.3). Otherwise any signed zone could
            // deny any name — a child's last NSEC wraps round to cover the parent's names after it, and
            // an NSEC3's match is its first label only — or, with NSEC3 iterations above the cap, make it
            // insecure.
            let proofs = chain.indices.filter { position in
                guard let zone = verifiedSigners[position], zone.isAncestorOrSelf(of: end) else { return false }
                return chain[position].type != DNSSECRecord.Kind.nsec3 || chain[position].owner.parent == zone
            }.map { chain[$0] }
            let nsecs = proofs.filter { $0.type == DNSSECRecord.Kind.nsec }.flatMap(\.records)
            let nsec3s = proofs.filter { $0.type == DNSSECRecord.Kind.nsec3 }.flatMap(\.records).compactMap(NSEC3Record.init)
            let nsecProof = claim == .nodata
                ? DenialProof.provesNODATA(name: end, type: questionType, nsecs: nsecs)
                : DenialProof.provesNXDOMAIN(name: end, nsecs: nsecs)
            let nsec3Proof = nsecProof ? nil : claim == .nodata
                ? DenialProof.provesNODATA(name: end, type: questionType, nsec3s: nsec3s)
                : DenialProof.provesNXDOMAIN(name: end, nsec3s: nsec3s)
            if nsec3Proof == .optOut {
                return .verdict(.insecure(why: InsecureReason(.optOut, "\(end) is denied through an NSEC3 opt-out span (RFC 5155 §9.2)")))
            }
            let proven = nsecProof || nsec3Proof == .proven
            if !proven, nsecs.isEmpty, !nsec3s.isEmpty, nsec3s.allSatisfy({ $0.iterations > NSEC3Record.maxIterations }) {
                return .verdict(.insecure(why: InsecureReason(.nsec3Iterations, "NSEC3 iterations above \(NSEC3Record.maxIterations) (RFC 9276)")))
            }
            guard proven else {
                return .verdict(.bogus(BogusReason(rrset: "\(end) \(RRset.typeName(questionType))", problem: .denialMissing)))
            }
        }
        return .verdict(.secure(ttls))
    }

    /// Asks for `request` unless the chain-query cap is reached.
    private mutating func fetch(_ request: ChainRequest, for rrset: RRset) -> Step {
        requests += 1
        guard requests <= limits.chainQueries else {
            return .verdict(.bogus(BogusReason(rrset, problem: .capReached(.chainQueries))))
        }
        return .fetch(request)
    }

    /// For an RRset without RRSIGs: walks down from the closest anchor one label at a time, asking for
    /// the DS of each name, until a signed NSEC proves an unsigned delegation (`.insecure`) or the owner is
    /// reached inside a signed zone (`.secure`: the RRset should have been signed). A signed DS on the
    /// way makes that name the zone the walk goes on in.
    private mutating func unsignedDelegation(above rrset: RRset) -> KeyLookup {
        guard let anchor = anchors.closest(to: rrset.owner) else { return .known(.insecure(why: InsecureReason(.noTrustAnchor, "no trust anchor"))) }
        var zone = anchor.zone
        var depth = zone.labelCount + 1
        while depth <= rrset.owner.labelCount {
            let zoneKeys: [DNSSECRecord]
            switch keys(of: zone) {
            case .need(let request): return .need(request)
            case .known(.secure(let keys, _)): zoneKeys = keys
            case .known(let settled): return .known(settled)
            }
            let name = rrset.owner.suffix(labels: depth)
            guard let answer = fetched[.ds(name)] else { return .need(.ds(name)) }
            switch NoDSProof.read(answer, name: name, zone: zone, keys: zoneKeys, now: now, limits: limits, budget: &budget) {
            case .ds: zone = name
            case .noCut: break
            case .insecureDelegation(.nsec3OptOut):
                return .known(.insecure(why: InsecureReason(.optOut,
                                                            "\(name) is in an opt-out span without DS (\(NoDSProof.Proof.nsec3OptOut))")))
            case .insecureDelegation(let proof):
                return .known(.insecure(why: InsecureReason(.unsignedDelegation, "\(name) is delegated without DS (\(proof))")))
            case .iterationsAboveLimit:
                return .known(.insecure(why: InsecureReason(.nsec3Iterations,
                                                            "NSEC3 iterations above \(NSEC3Record.maxIterations) (RFC 9276) at \(name)")))
            case .bogus(let reason): return .known(.bogus(reason))
            }
            depth += 1
        }
        return .known(.secure(keys: [], ttl: 0))
    }

    /// The RRsets from the question's name to the asked type, following CNAMEs (at most
    /// ``ValidationLimits/chainQueries`` links, so a loop ends).
    private func cnameChain() -> Result<[RRset], ChainEnd> {
        var chain: [RRset] = []
        var name = question
        for _ in 0...limits.chainQueries {
            // An RRset of RRSIGs alone (the records they cover absent) is no answer.
            if let final = answer.first(where: { $0.owner == name && $0.type == questionType && !$0.records.isEmpty }) {
                return .success(chain + [final])
            }
            guard let link = answer.first(where: { $0.owner == name && $0.type == DNSSECRecord.Kind.cname && !$0.records.isEmpty }),
                  let target = link.records.first.flatMap({ WireName.read($0.rdata)?.name })
            else { break }
            chain.append(link)
            name = target
        }
        return .failure(ChainEnd(reason: BogusReason(rrset: "\(name) \(RRset.typeName(questionType))", problem: .answerMissing),
                                 chain: (chain, name)))
    }

    /// Where a CNAME chain stopped short of the asked type: bogus for a positive answer, the name a
    /// negative answer's proof is about otherwise.
    private struct ChainEnd: Error {
        let reason: BogusReason
        let chain: ([RRset], WireName)
    }

    private enum KeyLookup {
        case need(ChainRequest)
        case known(ZoneKeys)
    }

    /// The validated keys of `zone`, or the first RRset still to fetch for them; records what it settles.
    private mutating func keys(of zone: WireName) -> KeyLookup {
        if let known = zoneKeys[zone] { return .known(known) }
        guard let anchor = anchors.closest(to: zone) else {
            return .known(.bogus(BogusReason(rrset: "\(zone) DNSKEY", problem: .wrongSigner(zone))))
        }
        guard let dnskeyAnswer = fetched[.dnskey(zone)] else { return .need(.dnskey(zone)) }
        let dnskeys = dnskeyAnswer.first { $0.owner == zone && $0.type == DNSSECRecord.Kind.dnskey }
        let result: ZoneKeys
        if anchor.zone == zone {
            result = ZoneKeys.validate(zone: zone, dnskeys: dnskeys, ds: anchor.ds, anchorKeys: anchor.dnskeys,
                                       now: now, limits: limits, budget: &budget)
        } else {
            guard let dsAnswer = fetched[.ds(zone)] else { return .need(.ds(zone)) }
            guard let ds = dsAnswer.first(where: { $0.owner == zone && $0.type == DNSSECRecord.Kind.ds }), !ds.records.isEmpty else {
                return settle(zone, .bogus(BogusReason(rrset: "\(zone) DS", problem: .dsMissingWithoutProof)))
            }
            // The DS RRset is signed by the parent side: a zone strictly above, at or below the anchor.
            guard let parent = ds.signatures.lazy.compactMap({ RRSIGData($0.rdata)?.signer })
                .first(where: { $0 != zone && $0.isAncestorOrSelf(of: zone) && anchor.zone.isAncestorOrSelf(of: $0) })
            else {
                let problem: BogusReason.Problem = ds.signatures.isEmpty ? .signaturesMissing
                    : .wrongSigner(ds.signatures.lazy.compactMap { RRSIGData($0.rdata)?.signer }.first ?? zone)
                return settle(zone, .bogus(BogusReason(ds, problem: problem)))
            }
            switch keys(of: parent) {
            case .need(let request): return .need(request)
            case .known(.bogus(let reason)): return settle(zone, .bogus(reason))
            case .known(.insecure(let why)): return settle(zone, .insecure(why: why))
            case .known(.secure(let parentKeys, let parentTTL)):
                switch SignatureCheck.verify(ds, zone: parent, keys: parentKeys, now: now, limits: limits, budget: &budget) {
                case .bogus(let reason): return settle(zone, .bogus(reason))
                case .unsupported: return settle(zone, .bogus(BogusReason(ds, problem: .noSupportedSignature)))
                case .verified(let verified):
                    var trusted = ds.records
                    let cap = min(verified.ttl, parentTTL)
                    for index in trusted.indices { trusted[index].ttl = min(trusted[index].ttl, cap) }
                    result = ZoneKeys.validate(zone: zone, dnskeys: dnskeys, ds: trusted, now: now, limits: limits, budget: &budget)
                }
            }
        }
        return settle(zone, result)
    }

    private mutating func settle(_ zone: WireName, _ keys: ZoneKeys) -> KeyLookup {
        zoneKeys[zone] = keys
        validatedKeys[zone] = keys
        return .known(keys)
    }
}
