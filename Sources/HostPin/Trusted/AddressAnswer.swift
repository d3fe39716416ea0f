/// What one upstream's reply to an A or AAAA query means, read from the message itself.
///
/// ``init(reading:name:type:)`` is the one place a reply is judged. ``combining(_:_:)`` joins the A and
/// AAAA answers of a resolution for both families.
enum AddressAnswer: Sendable, Hashable {
    /// The addresses of the type asked for, owned by the end of `cnames` (or by the name asked when
    /// `cnames` is empty), each with its own TTL.
    case addresses([ResolvedAddress], cnames: [CNAMERecord])
    /// NOERROR without an address of the type asked for (RFC 2308 §2.2), with the zone's SOA from the
    /// authority section when the upstream sent it (RFC 2308 §3) and the CNAME chain that led to the name
    /// without data.
    case nodata(soa: SOARecord?, cnames: [CNAMERecord] = [])
    /// RCODE 3, the name does not exist (RFC 2308 §2.1), with the zone's SOA when sent and the CNAME
    /// chain that led to the name that does not exist.
    case nxdomain(soa: SOARecord?, cnames: [CNAMERecord] = [])
    /// The upstream failed this query; the next upstream may do better.
    case failed(UpstreamFailure.Reason)
    /// For both families: the addresses of one, while the other family's query failed with `failure`. The
    /// upstream failed, but its addresses are better than nothing when no other upstream does better.
    case partial([ResolvedAddress], cnames: [CNAMERecord], failure: UpstreamFailure.Reason)

    /// Reads `reply` as the answer to the query for `name` and `type`.
    ///
    /// In this order:
    /// - The header must be a response (QR, RFC 1035 §4.1.1) to a standard query (OPCODE 0), complete
    ///   (TC clear: a truncated reply over TCP, or one a transport hands back truncated, holds part of an
    ///   answer at best; RFC 7766 §5), with exactly the question asked. Otherwise `.badResponse`.
    /// - RCODE 0, NOERROR: the CNAME chain is followed from `name` through the answer section (RFC 1034
    ///   §3.6.2, §4.3.2); the records of `type` and class IN owned by its end are the answer, and none is
    ///   NODATA. Records of other types, classes or owners are ignored; a chain that loops is
    ///   `.badResponse`.
    /// - RCODE 3, NXDOMAIN: `.nxdomain`. RCODE 2, SERVFAIL, and 5, REFUSED: `.failed` with that reason.
    ///   Any other RCODE (FORMERR, NOTIMP, an unassigned or extended one): `.badResponse`.
    ///
    /// - Parameters:
    ///   - reply: The upstream's reply.
    ///   - name: The name asked, as in the query: lower case, no trailing dot.
    ///   - type: ``RecordType/a`` or ``RecordType/aaaa``.
    init(reading reply: DNSReply, name: String, type: RecordType) {
        guard reply.isWholeResponse(to: DNSReply.Question(name: name, type: type, dnsClass: DNSReply.internetClass)) else {
            self = .failed(.badResponse)
            return
        }
        switch reply.rcode {
        case 0, 3:
            guard let (canonicalName, cnames) = Self.chain(from: name, in: reply.answers) else {
                self = .failed(.badResponse)
                return
            }
            let soa = Self.soa(for: canonicalName, in: reply.authority)
            guard reply.rcode == 0 else {
                self = .nxdomain(soa: soa, cnames: cnames)
                return
            }
            let addresses = reply.answers.compactMap { record -> ResolvedAddress? in
                guard record.type == type, record.dnsClass == DNSReply.internetClass, record.owner == canonicalName,
                      case .address(let address) = record.data
                else { return nil }
                return ResolvedAddress(address: address, ttl: record.ttl)
            }
            self = addresses.isEmpty ? .nodata(soa: soa, cnames: cnames) : .addresses(addresses, cnames: cnames)
        case 2: self = .failed(.servfail)
        case 5: self = .failed(.refused)
        default: self = .failed(.badResponse)
        }
    }

    /// The CNAME chain from `name` in `answers`, in order, and the name at its end; `nil` when it loops.
    private static func chain(from name: String, in answers: [DNSReply.Record])
        -> (canonicalName: String, cnames: [CNAMERecord])?
    {
        var current = name
        var cnames: [CNAMERecord] = []
        while let link = answers.first(where: { $0.type == .cname && $0.dnsClass == DNSReply.internetClass && $0.owner == current }),
              case .canonicalName(let target) = link.data
        {
            // A chain without a loop uses each CNAME record at most once.
            guard cnames.count < answers.count else { return nil }
            cnames.append(CNAMERecord(alias: current, target: target, ttl: link.ttl))
            current = target
        }
        return (current, cnames)
    }

    /// The first SOA of class IN in `authority` whose owner is `name` or an ancestor of it: the zone the
    /// negative answer comes from (RFC 2308 §2.1, §2.2).
    private static func soa(for name: String, in authority: [DNSReply.Record]) -> SOARecord? {
        for record in authority where record.type == .soa && record.dnsClass == DNSReply.internetClass {
            guard case .soa(let primaryServer, let mailbox, let serial, let refresh, let retry, let expire, let minimum)
                    = record.data,
                  record.owner.isEmpty || name == record.owner || name.hasSuffix("." + record.owner)
            else { continue }
            return SOARecord(zone: record.owner, ttl: record.ttl, primaryServer: primaryServer, mailbox: mailbox,
                             serial: serial, refresh: refresh, retry: retry, expire: expire, minimum: minimum)
        }
        return nil
    }

    /// The answer for both families from the A answer `a` and the AAAA answer `aaaa`: the addresses of both
    /// (A first) with each CNAME link once; with a failure on one side, the other side's addresses as
    /// `.partial`, else the failure (A's first); one side's addresses; NXDOMAIN when both say so; else
    /// NODATA. A negative answer keeps the first SOA and each CNAME link of either side once.
    static func combining(_ a: AddressAnswer, _ aaaa: AddressAnswer) -> AddressAnswer {
        switch (a, aaaa) {
        case (.addresses(let v4, let chain), .addresses(let v6, let more)):
            return .addresses(v4 + v6, cnames: chain + more.filter { !chain.contains($0) })
        case (.addresses(let addresses, let cnames), .failed(let failure)),
             (.failed(let failure), .addresses(let addresses, let cnames)):
            return .partial(addresses, cnames: cnames, failure: failure)
        case (.failed, _), (.partial, _): return a
        case (_, .failed), (_, .partial): return aaaa
        case (.addresses, _): return a
        case (_, .addresses): return aaaa
        case (.nxdomain, .nxdomain):
            return .nxdomain(soa: a.soa ?? aaaa.soa, cnames: a.cnames + aaaa.cnames.filter { !a.cnames.contains($0) })
        case (.nodata, _), (_, .nodata):
            return .nodata(soa: a.soa ?? aaaa.soa, cnames: a.cnames + aaaa.cnames.filter { !a.cnames.contains($0) })
        }
    }

    /// The SOA a negative answer carries.
    private var soa: SOARecord? {
        switch self {
        case .nodata(let soa, _), .nxdomain(let soa, _): soa
        case .addresses, .failed, .partial: nil
        }
    }

    /// The CNAME chain of an answer; empty for a failure.
    private var cnames: [CNAMERecord] {
        switch self {
        case .addresses(_, let cnames), .nodata(_, let cnames), .nxdomain(_, let cnames), .partial(_, let cnames, _): cnames
        case .failed: []
        }
    }
}
