/// What one upstream reply claims, with the records DNSSEC validation needs to check it: the answer and
/// authority sections as ``DNSSECRecord``s, RRSIGs and NSEC/NSEC3 proofs included, read in the same parse
/// as the answer itself (``DNSReply/init(wire:readingDNSSEC:)``).
struct SignedReply: Sendable, Hashable {
    /// The type asked for (A, AAAA, or a forwarded question's type).
    let type: UInt16
    /// An RRset of `type` (after any CNAMEs), NXDOMAIN or NODATA.
    let claim: AnswerValidation.Claim
    let answer: [DNSSECRecord]
    let authority: [DNSSECRecord]

    /// The claim of `answer` read from `reply`, or `nil` when it is an upstream's failure (nothing to
    /// validate).
    init?(_ reply: DNSReply, type: RecordType, answer: AddressAnswer) {
        switch answer {
        case .addresses: claim = .answer
        case .nodata: claim = .nodata
        case .nxdomain: claim = .nxdomain
        case .failed, .partial: return nil
        }
        self.type = type.rawValue
        self.answer = reply.signedAnswer
        self.authority = reply.signedAuthority
    }

    /// The claim of a forwarded `reply` (NOERROR or NXDOMAIN) to `question`: NXDOMAIN by its RCODE, an
    /// answer when a record of the asked type ends the CNAME chain from the name (or, for a CNAME question,
    /// is at the name), else NODATA. `nil` for the types no RRset answers, which are not validated: RRSIG
    /// (RFC 4035 §3.2.1 lets a server answer it without signatures) and the meta-types 128–255 (ANY, …).
    init?(forwarded reply: DNSReply, _ question: ForwardedQuestion) {
        guard question.type != DNSSECRecord.Kind.rrsig, !(128...255).contains(question.type) else { return nil }
        let type = RecordType(rawValue: question.type)
        var end = question.name
        var links = 0
        while !reply.answers.contains(where: { $0.owner == end && $0.type == type }),
              let link = reply.answers.first(where: { $0.owner == end && $0.type == .cname }),
              case .canonicalName(let target) = link.data, links < reply.answers.count {
            end = target
            links += 1
        }
        let answered = reply.answers.contains { $0.owner == end && $0.type == type }
        self.init(type: question.type, claim: reply.rcode == 3 ? .nxdomain : answered ? .answer : .nodata,
                  answer: reply.signedAnswer, authority: reply.signedAuthority)
    }

    init(type: UInt16, claim: AnswerValidation.Claim, answer: [DNSSECRecord], authority: [DNSSECRecord]) {
        self.type = type
        self.claim = claim
        self.answer = answer
        self.authority = authority
    }
}
