import HostPin

/// What HostPin answers to one query: an RCODE, the answer section and the authority section (the
/// zone's SOA record of a negative answer, RFC 2308 §3).
struct DNSAnswer: Sendable, Hashable {
    let rcode: DNSResponseCode
    let records: [DNSRecord]
    let authority: [DNSRecord]
    /// DNSSEC validation found the answer secure (RFC 4035 §4.3): the response sets AD for a client that
    /// asked with AD or DO (RFC 6840 §5.8).
    var secure = false
    /// Why a SERVFAIL is one, or why an answer is insecure (27, NSEC3 iterations), for a client that sent
    /// EDNS (RFC 8914); `nil` for none.
    var extendedError: ExtendedDNSError?

    init(rcode: DNSResponseCode, records: [DNSRecord] = [], authority: [DNSRecord] = []) {
        self.rcode = rcode
        self.records = records
        self.authority = authority
    }

    /// The name does not exist (RFC 2308 §2.1), said without an SOA record: a blocked name.
    static let nxdomain = DNSAnswer(rcode: .nxdomain)
    /// The name exists without records of the type asked (NOERROR, empty answer: RFC 2308 §2.2), said
    /// without an SOA record.
    static let nodata = DNSAnswer(rcode: .noerror)
    static let servfail = DNSAnswer(rcode: .servfail)
    static let refused = DNSAnswer(rcode: .refused)

    /// The answer to ANY (RFC 8482 §4.2): one synthesised HINFO record, CPU "RFC8482", OS empty, instead
    /// of every record of the name (which would make the stub an amplifier). TTL one hour: the record
    /// never changes.
    static let minimalAny = DNSAnswer(rcode: .noerror, records: [
        DNSRecord(owner: .question, ttl: 3600, data: .hostInfo(cpu: "RFC8482", os: "")),
    ])

    /// The answer for what the resolver returned for the question's name, each TTL counted down by
    /// ``HostPin/ResolutionOutcome/age`` on the cache's monotonic clock (see
    /// ``remainingTTL(_:age:ceiling:)``).
    ///
    /// Addresses: the CNAME chain in order, then the addresses. NXDOMAIN and NODATA: the CNAME chain that
    /// led there in the answer section, and the zone's SOA record in the authority section with the
    /// negative answer's TTL, the smaller of the record's TTL and its MINIMUM field (RFC 2308 §3); no SOA
    /// record when the upstream sent none (then clients do not cache the answer: RFC 2308 §5).
    ///
    /// - Parameters:
    ///   - outcome: What ``HostPin/CachingResolver/resolveDetailed(_:family:)`` returned.
    ///   - limits: The cache's TTL ceilings, so no client keeps a record longer than HostPin does.
    init(_ outcome: ResolutionOutcome, limits: ResolutionCache.Limits) {
        let age = outcome.age
        switch outcome.answer {
        case .addresses(let resolution):
            let (records, owner) = Self.chain(resolution.cnames, age: age, ceiling: limits.maximumTTL)
            self.init(rcode: .noerror, records: records + resolution.addresses.map {
                DNSRecord(owner: owner, ttl: Self.remainingTTL($0.ttl, age: age, ceiling: limits.maximumTTL), data: .address($0.address))
            })
            secure = resolution.dnssec == .secure
            extendedError = resolution.insecurity.flatMap(ExtendedDNSError.init(insecure:))
        case .negative(let negative):
            let (records, _) = Self.chain(negative.cnames, age: age, ceiling: limits.maximumTTL)
            let authority = negative.soa.map {
                DNSRecord(owner: .name($0.zone), ttl: Self.remainingTTL($0.negativeTTL, age: age, ceiling: limits.maximumNegativeTTL),
                          data: .startOfAuthority($0))
            }
            self.init(rcode: negative.kind == .nxdomain ? .nxdomain : .noerror, records: records,
                      authority: authority.map { [$0] } ?? [])
            secure = negative.dnssec == .secure
            extendedError = negative.insecurity.flatMap(ExtendedDNSError.init(insecure:))
        }
    }

    /// The answer for a resolution that failed; `nil` for a cancelled one (the server is stopping: no
    /// answer is better than a wrong one).
    init?(_ error: ResolutionError) {
        switch error {
        case .nxdomain: self = .nxdomain
        case .nodata: self = .nodata
        case .cancelled: return nil
        // An upstream failure, a time budget run out, a resolver that cannot work: the client may ask
        // another server. (`badName` cannot happen: the name was parsed before it was resolved.)
        case .upstreamsFailed, .timeout, .noUpstreams, .setupFailed, .badName: self = .servfail
        // A bogus answer is SERVFAIL too (RFC 4035 §5.5), saying why (RFC 8914).
        case .dnssecBogus(let reason, _):
            self = .servfail
            extendedError = ExtendedDNSError(bogus: reason)
        }
    }

    /// The CNAME records of `cnames`, the question's name first owner, and the owner of what follows them.
    private static func chain(_ cnames: [CNAMERecord], age: UInt32, ceiling: UInt32) -> ([DNSRecord], DNSRecord.Owner) {
        var records: [DNSRecord] = []
        var owner = DNSRecord.Owner.question
        for cname in cnames {
            records.append(DNSRecord(owner: owner, ttl: remainingTTL(cname.ttl, age: age, ceiling: ceiling),
                                     data: .canonicalName(cname.target)))
            owner = .name(cname.target)
        }
        return (records, owner)
    }

    /// The seconds left of a record's TTL: its TTL, at most `ceiling` (the cache keeps no answer longer),
    /// less `age`, the whole seconds the answer has been cached, at least 0.
    static func remainingTTL(_ ttl: UInt32, age: UInt32, ceiling: UInt32) -> UInt32 {
        let lifetime = min(ttl, ceiling)
        return lifetime > age ? lifetime - age : 0
    }
}
