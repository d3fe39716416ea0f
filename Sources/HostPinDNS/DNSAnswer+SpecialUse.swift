import HostPin

extension DNSAnswer {
    /// The answer HostPin gives itself, for any QTYPE, to a name of a special-use zone
    /// (``HostPin/SpecialUseName``), which no upstream is asked: the zone's RCODE (NXDOMAIN below `onion`,
    /// `invalid`, `local`, `home.arpa` and the RFC 6303 reverse zones; NODATA below `resolver.arpa`, RFC 9462
    /// §6.4, and for other types than A and AAAA of `localhost`, RFC 6761 §6.3) with the zone's synthetic SOA
    /// record in the authority section (RFC 2308 §3), TTL 60. A zone's apex exists and holds only its SOA
    /// record: an SOA query there is answered with it, any other type is NODATA.
    ///
    /// - Parameters:
    ///   - special: The zone holding `name` (``HostPin/SpecialUseName/entry(containing:)``).
    ///   - name: The question's name in presentation form, any letter case.
    ///   - type: The QTYPE.
    /// - Returns: `nil` for A and AAAA of a `localhost` name: the resolver answers those with loopback
    ///   addresses (``HostPin/Resolution/literal(for:family:)``).
    init?(special: SpecialUseName, name: String, type: DNSType) {
        let soa = special.soa
        if special.isApex(name), type == .soa {
            self.init(rcode: .noerror, records: [DNSRecord(owner: .question, ttl: soa.ttl, data: .startOfAuthority(soa))])
            return
        }
        let kind: NegativeAnswer.Kind
        switch special.answer {
        case .loopback:
            guard type != .a, type != .aaaa else { return nil }
            kind = .nodata
        case .negative(let zoneKind):
            kind = special.isApex(name) ? .nodata : zoneKind
        }
        self.init(rcode: kind == .nxdomain ? .nxdomain : .noerror,
                  authority: [DNSRecord(owner: .name(soa.zone), ttl: soa.negativeTTL, data: .startOfAuthority(soa))])
    }
}
