import CLDNS
import Foundation

/// An answer as the shared cache stores it: one DNS message (RFC 1035 §4.1) written by ldns — for the
/// name and the family asked (question type A, AAAA, or A for both families with the records of both),
/// the CNAME chain and the addresses in the answer section, a negative answer's SOA record in the
/// authority section, RCODE 3 for NXDOMAIN — and read back by ldns and ``AddressAnswer``, the same
/// reading an upstream's reply gets.
///
/// What is kept is what ``ResolutionOutcome`` holds: the answer's RRSIGs are not, since the resolver hands
/// its verdict on instead of the signatures (the value carries that ``DNSSECStatus``).
enum SharedCacheAnswer {
    /// `answer` (asked for `family`) as a DNS message; `nil` when ldns cannot write a record of it.
    static func wire(of answer: ResolutionOutcome.Answer, family: AddressFamily) -> [UInt8]? {
        let name: HostName, cnames: [CNAMERecord]
        var records: [String] = [], authority: [String] = []
        var rcode: UInt8 = 0
        switch answer {
        case .addresses(let resolution):
            name = resolution.name
            cnames = resolution.cnames
            let owner = resolution.canonicalName
            for address in resolution.addresses {
                let type = address.address.family == .v4 ? "A" : "AAAA"
                records.append("\(absolute(owner)) \(address.ttl) IN \(type) \(address.address)")
            }
        case .negative(let negative):
            name = negative.name
            cnames = negative.cnames
            rcode = negative.kind == .nxdomain ? 3 : 0
            if let soa = negative.soa {
                authority.append("\(absolute(soa.zone)) \(soa.ttl) IN SOA \(absolute(soa.primaryServer)) "
                                 + "\(absolute(soa.mailbox)) \(soa.serial) \(soa.refresh) \(soa.retry) "
                                 + "\(soa.expire) \(soa.minimum)")
            }
        }
        records = cnames.map { "\(absolute($0.alias)) \($0.ttl) IN CNAME \(absolute($0.target))" } + records
        guard let packet = ldns_pkt_new() else { return nil }
        defer { ldns_pkt_free(packet) }
        ldns_pkt_set_qr(packet, true)
        ldns_pkt_set_rcode(packet, rcode)
        let question = "\(absolute(name.text)) IN \(family == .v6 ? "AAAA" : "A")"
        guard push(question, section: LDNS_SECTION_QUESTION, to: packet) else { return nil }
        for record in records { guard push(record, section: LDNS_SECTION_ANSWER, to: packet) else { return nil } }
        for record in authority { guard push(record, section: LDNS_SECTION_AUTHORITY, to: packet) else { return nil } }
        var out: UnsafeMutablePointer<UInt8>?
        var size = 0
        guard ldns_pkt2wire(&out, packet, &size) == LDNS_STATUS_OK, let out else { return nil }
        defer { free(out) }
        return Array(UnsafeBufferPointer(start: out, count: size))
    }

    /// The answer `wire` holds for `name` and `family`, from the shared cache: source
    /// ``Resolution/Source/sharedCache``, every TTL less `age` seconds (the time since the writer received
    /// it), `receivedAt` the writer's, `dnssec` the value's status. `nil` when the message does not read
    /// as an answer for that name and family, or a TTL has run out.
    static func answer(from wire: [UInt8], name: HostName, family: AddressFamily, age: UInt32, receivedAt: Date,
                       dnssec: DNSSECStatus?) -> ResolutionOutcome.Answer? {
        guard let reply = DNSReply(wire: wire) else { return nil }
        func reading(_ type: RecordType) -> AddressAnswer {
            let asked = DNSReply(isResponse: reply.isResponse, opcode: reply.opcode, isTruncated: reply.isTruncated,
                                 rcode: reply.rcode,
                                 questions: [DNSReply.Question(name: name.text, type: type, dnsClass: DNSReply.internetClass)],
                                 answers: reply.answers, authority: reply.authority)
            return AddressAnswer(reading: asked, name: name.text, type: type)
        }
        let read: AddressAnswer = switch family {
        case .v4: reading(.a)
        case .v6: reading(.aaaa)
        case .any: AddressAnswer.combining(reading(.a), reading(.aaaa))
        }
        func aged(_ ttl: UInt32) -> UInt32? { ttl > age ? ttl - age : nil }
        func aged(_ cnames: [CNAMERecord]) -> [CNAMERecord]? {
            var out: [CNAMERecord] = []
            for cname in cnames {
                guard let ttl = aged(cname.ttl) else { return nil }
                out.append(CNAMERecord(alias: cname.alias, target: cname.target, ttl: ttl))
            }
            return out
        }
        switch read {
        case .addresses(let addresses, let cnames):
            var left: [ResolvedAddress] = []
            for address in addresses {
                guard let ttl = aged(address.ttl) else { return nil }
                left.append(ResolvedAddress(address: address.address, ttl: ttl))
            }
            guard let chain = aged(cnames) else { return nil }
            return .addresses(Resolution(name: name, addresses: left, cnames: chain, upstream: nil,
                                         source: .sharedCache, receivedAt: receivedAt, dnssec: dnssec))
        case .nxdomain(let soa?, let cnames), .nodata(let soa?, let cnames):
            guard let ttl = aged(soa.negativeTTL), let chain = aged(cnames) else { return nil }
            let kind: NegativeAnswer.Kind = if case .nxdomain = read { .nxdomain } else { .nodata }
            let left = SOARecord(zone: soa.zone, ttl: ttl, primaryServer: soa.primaryServer, mailbox: soa.mailbox,
                                 serial: soa.serial, refresh: soa.refresh, retry: soa.retry, expire: soa.expire,
                                 minimum: soa.minimum)
            return .negative(NegativeAnswer(name: name, family: family, kind: kind, cnames: chain, soa: left,
                                            upstream: nil, source: .sharedCache, receivedAt: receivedAt, dnssec: dnssec))
        case .nxdomain(nil, _), .nodata(nil, _), .failed, .partial:
            return nil
        }
    }

    /// `name` with the trailing dot ldns reads as absolute; the root for the empty name.
    private static func absolute(_ name: String) -> String { name.isEmpty ? "." : name + "." }

    /// Adds the record written as `text` to `section` of `packet`; false when ldns cannot read it.
    private static func push(_ text: String, section: ldns_pkt_section, to packet: UnsafeMutablePointer<ldns_pkt>) -> Bool {
        var rr: UnsafeMutablePointer<ldns_rr>?
        let status = section == LDNS_SECTION_QUESTION
            ? ldns_rr_new_question_frm_str(&rr, text, nil, nil)
            : ldns_rr_new_frm_str(&rr, text, 0, nil, nil)
        guard status == LDNS_STATUS_OK, let rr else { return false }
        guard ldns_pkt_push_rr(packet, section, rr) else {
            ldns_rr_free(rr)
            return false
        }
        return true
    }
}
