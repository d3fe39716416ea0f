import HostPin

/// What to do with one query, decided from the query and the rules alone (no DNS, no sockets): answer
/// it at once, resolve its name through the trusted cache, or hand it to the forwarder.
enum QueryPlan: Sendable, Hashable {
    /// Answer with this, nothing more to ask.
    case answer(DNSAnswer)
    /// Resolve the name's addresses of `family` through the resolver (A: v4, AAAA: v6).
    case resolve(HostName, AddressFamily)
    /// Another record type (MX, TXT, SRV, HTTPS, PTR, …) or a name that is not a host name: for the
    /// trusted upstreams through a ``DNSForwarder``.
    case forward

    /// The TTL of an answer a `pin` rule gives, in seconds: a rule has no TTL of its own, and a minute
    /// lets clients see a changed rules file soon after HostPin restarts with it.
    static let pinnedTTL: UInt32 = 60

    /// Decides what `query` needs.
    ///
    /// In order: an EDNS version other than 0 gets BADVERS (RFC 6891 §6.1.3); a class other than IN,
    /// and zone transfers (AXFR, IXFR), get REFUSED: HostPin serves only Internet addresses and has no
    /// zone; a name that is not a host name (an IP literal, escaped octets, the root) is forwarded unless
    /// it is of a special-use zone; then the rules decide for the name (``Rules/decide(_:)`` with the name
    /// as a tunnel's host, so `host` rules apply and URL rules cannot): `block` answers ``BlockedAnswer``,
    /// `pin` its addresses; a special-use name (``HostPin/SpecialUseName``) is answered here for every type
    /// (``DNSAnswer/init(special:name:type:)``; `localhost`'s A and AAAA are resolved, to loopback); ANY is
    /// answered minimally (RFC 8482); A and AAAA are resolved; any other type is forwarded.
    ///
    /// A special-use name that `routing` routes (split DNS: a reverse zone or `home.arpa` that a route
    /// takes, ``HostPin/HostResolver/routesSpecialUse(_:)``) is resolved or forwarded as any other name.
    static func make(for query: DNSQuery, rules: Rules, blocked: BlockedAnswer,
                     routing: (any HostResolver)? = nil) -> QueryPlan {
        if let edns = query.header.edns, edns.version != 0 { return .answer(DNSAnswer(rcode: .badvers)) }
        let question = query.question
        guard question.dnsClass == DNSQuestion.internetClass else { return .answer(.refused) }
        guard question.type != .axfr, question.type != .ixfr else { return .answer(.refused) }
        // A special-use name (HostPin's SpecialUseName: `onion`, `local`, the RFC 6303 reverse zones, …)
        // never goes upstream, not even one that is no host name (`a\032b.onion`).
        var special = SpecialUseName.entry(containing: question.name)
        if let zone = special, zone.mayBeRouted, let routing, let routed = try? HostName.parse(question.name),
           routing.routesSpecialUse(routed) {
            special = nil
        }
        // Parsing lower-cases the name; `localhost` stays (the resolver answers it with loopback).
        guard let name = try? HostName.parse(question.name), name.literalAddress == nil else {
            guard let special else { return .forward }
            // The resolver cannot take such a `localhost` name: its loopback address is answered here, TTL 0
            // as the resolver's (RFC 6761 §6.3).
            return .answer(DNSAnswer(special: special, name: question.name, type: question.type) ?? DNSAnswer(
                rcode: .noerror, records: [DNSRecord(owner: .question, ttl: 0,
                                                     data: .address(question.type == .a ? .loopbackV4 : .loopbackV6))]))
        }
        let family: AddressFamily? = switch question.type {
        case .a: .v4
        case .aaaa: .v6
        default: nil
        }
        switch rules.decide(PolicyRequest(connectTo: name.text, port: 443)) {
        case .block:
            guard let family, blocked == .unspecified else { return .answer(.nxdomain) }
            return .answer(answer(family == .v4 ? [unspecifiedV4] : [unspecifiedV6], family: family))
        case .send(.pinned(let addresses, _), _):
            if let family { return .answer(answer(addresses, family: family)) }
        case .pass, .respond, .redirect, .send(.resolve, _):
            // HTTP-level rules (respond, redirect, header) and `pass` leave the name's addresses alone.
            break
        }
        if let special, let answer = DNSAnswer(special: special, name: question.name, type: question.type) {
            return .answer(answer)
        }
        if question.type == .any { return .answer(.minimalAny) }
        guard let family else { return .forward }
        return .resolve(name, family)
    }

    /// The answer a rule gives: its addresses of `family` (none is NODATA), with ``pinnedTTL``.
    private static func answer(_ addresses: [IPAddress], family: AddressFamily) -> DNSAnswer {
        DNSAnswer(rcode: .noerror, records: addresses.filter { family.admits($0.family) }
            .map { DNSRecord(owner: .question, ttl: pinnedTTL, data: .address($0)) })
    }

    private static let unspecifiedV4 = IPAddress("0.0.0.0")!
    private static let unspecifiedV6 = IPAddress("::")!
}
