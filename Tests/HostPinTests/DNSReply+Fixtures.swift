import CLDNS
@testable import HostPin
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension DNSReply {
    /// A NOERROR response (QR set, OPCODE 0, TC clear) to the query for `name` and `type`, class IN.
    static func response(to name: String, _ type: RecordType, rcode: UInt16 = 0, answers: [Record] = [],
                         authority: [Record] = []) -> DNSReply {
        DNSReply(isResponse: true, opcode: 0, isTruncated: false, rcode: rcode,
                 questions: [Question(name: name, type: type, dnsClass: DNSReply.internetClass)],
                 answers: answers, authority: authority)
    }

    /// This reply with some header fields or the question section changed.
    func with(isResponse: Bool? = nil, opcode: UInt8? = nil, isTruncated: Bool? = nil,
              questions: [Question]? = nil) -> DNSReply {
        DNSReply(isResponse: isResponse ?? self.isResponse, opcode: opcode ?? self.opcode,
                 isTruncated: isTruncated ?? self.isTruncated, rcode: rcode, questions: questions ?? self.questions,
                 answers: answers, authority: authority)
    }
}

extension DNSReply.Record {
    static func a(_ owner: String, _ address: String, ttl: UInt32 = 60, dnsClass: UInt16 = DNSReply.internetClass)
        -> DNSReply.Record
    {
        DNSReply.Record(owner: owner, type: .a, dnsClass: dnsClass, ttl: ttl, data: .address(IPAddress(address)!))
    }

    static func aaaa(_ owner: String, _ address: String, ttl: UInt32 = 60) -> DNSReply.Record {
        DNSReply.Record(owner: owner, type: .aaaa, dnsClass: DNSReply.internetClass, ttl: ttl,
                        data: .address(IPAddress(address)!))
    }

    static func cname(_ owner: String, _ target: String, ttl: UInt32 = 60) -> DNSReply.Record {
        DNSReply.Record(owner: owner, type: .cname, dnsClass: DNSReply.internetClass, ttl: ttl,
                        data: .canonicalName(target))
    }

    /// An SOA record; the fields tests do not name are those of ``SOARecord/init(zone:ttl:minimum:)``.
    static func soa(_ zone: String, ttl: UInt32 = 3600, minimum: UInt32 = 60) -> DNSReply.Record {
        let record = SOARecord(zone: zone, ttl: ttl, minimum: minimum)
        return DNSReply.Record(owner: zone, type: .soa, dnsClass: DNSReply.internetClass, ttl: ttl,
                               data: .soa(primaryServer: record.primaryServer, mailbox: record.mailbox,
                                          serial: record.serial, refresh: record.refresh, retry: record.retry,
                                          expire: record.expire, minimum: minimum))
    }
}

extension SOARecord {
    /// The SOA record of `zone` as the tests' zones write it: `ns.ZONE. hostmaster.ZONE. 1 3600 600 86400
    /// MINIMUM`.
    init(zone: String, ttl: UInt32, minimum: UInt32) {
        let suffix = zone.isEmpty ? "" : "." + zone
        self.init(zone: zone, ttl: ttl, primaryServer: "ns" + suffix, mailbox: "hostmaster" + suffix, serial: 1,
                  refresh: 3600, retry: 600, expire: 86400, minimum: minimum)
    }
}

/// A DNS message in wire format, made by ldns from zone-file text, so the tests write no DNS encoder.
struct WireMessage {
    var question: String
    var answers: [String] = []
    var authority: [String] = []
    var isResponse = true
    var isTruncated = false
    var opcode: UInt32 = 0
    /// The header's 4-bit RCODE.
    var rcode: UInt8 = 0
    /// The upper 8 bits of the RCODE, carried in an OPT record (RFC 6891 §6.1.3); an OPT record is added
    /// when this is not 0.
    var extendedRcode: UInt8 = 0

    /// `question` is `NAME CLASS TYPE`, e.g. `x.test. IN A`; records are zone-file lines.
    init(question: String, answers: [String] = [], authority: [String] = []) {
        self.question = question
        self.answers = answers
        self.authority = authority
    }

    var bytes: [UInt8] {
        get throws {
            let packet = try #require(ldns_pkt_new())
            defer { ldns_pkt_free(packet) }
            ldns_pkt_set_id(packet, 4711)
            ldns_pkt_set_qr(packet, isResponse)
            ldns_pkt_set_tc(packet, isTruncated)
            ldns_pkt_set_opcode(packet, ldns_pkt_opcode(rawValue: opcode))
            ldns_pkt_set_rcode(packet, rcode)
            if extendedRcode != 0 {
                ldns_pkt_set_edns_udp_size(packet, 1232)
                ldns_pkt_set_edns_extended_rcode(packet, extendedRcode)
            }
            var entry: UnsafeMutablePointer<ldns_rr>?
            try #require(ldns_rr_new_question_frm_str(&entry, question, nil, nil) == LDNS_STATUS_OK)
            ldns_pkt_push_rr(packet, LDNS_SECTION_QUESTION, entry)
            for (section, lines) in [(LDNS_SECTION_ANSWER, answers), (LDNS_SECTION_AUTHORITY, authority)] {
                for line in lines {
                    var rr: UnsafeMutablePointer<ldns_rr>?
                    try #require(ldns_rr_new_frm_str(&rr, line, 0, nil, nil) == LDNS_STATUS_OK, "\(line)")
                    ldns_pkt_push_rr(packet, section, rr)
                }
            }
            var wire: UnsafeMutablePointer<UInt8>?
            var size = 0
            try #require(ldns_pkt2wire(&wire, packet, &size) == LDNS_STATUS_OK)
            defer { free(wire) }
            return Array(UnsafeBufferPointer(start: try #require(wire), count: size))
        }
    }
}
