import CLDNS
import HostPin

/// How long a forwarded reply may be cached, read from the reply itself with ldns.
enum ReplyLifetime {
    /// The seconds `reply` may be kept as the answer to `question`: the smallest TTL of its records, every section counted (a
    /// reply is kept and served whole, so no record may outlive its own TTL; RFC 2181 §5.2), and for an
    /// SOA in the authority section its MINIMUM too (RFC 2308 §5).
    ///
    /// - Returns: `nil` for a reply that must not be cached: one ldns cannot read, one that is no response
    ///   to `question` (QR clear, not exactly one question, another name, type or class), an RCODE other than
    ///   NOERROR and NXDOMAIN, or a negative answer (NXDOMAIN, or NOERROR without answer records: NODATA)
    ///   without an SOA in the authority section, which says how long the negative answer holds
    ///   (RFC 2308 §5). 0 for a record with TTL 0.
    static func seconds(of reply: [UInt8], answering question: ForwardedQuestion) -> UInt32? {
        var parsed: UnsafeMutablePointer<ldns_pkt>?
        let status = reply.withUnsafeBufferPointer { ldns_wire2pkt(&parsed, $0.baseAddress, $0.count) }
        guard status == LDNS_STATUS_OK, let packet = parsed else { return nil }
        defer { ldns_pkt_free(packet) }
        guard answers(packet, question) else { return nil }
        let rcode = ldns_pkt_get_rcode(packet)
        guard ldns_pkt_edns_extended_rcode(packet) == 0, rcode == LDNS_RCODE_NOERROR || rcode == LDNS_RCODE_NXDOMAIN
        else { return nil }
        var lifetime = UInt32.max
        var hasSOA = false
        let authority = ldns_pkt_authority(packet)
        for list in [ldns_pkt_answer(packet), authority, ldns_pkt_additional(packet)] {
            for index in 0..<(list.map { ldns_rr_list_rr_count($0) } ?? 0) {
                guard let rr = ldns_rr_list_rr(list, index) else { continue }
                lifetime = min(lifetime, ldns_rr_ttl(rr))
                // MNAME, RNAME, SERIAL, REFRESH, RETRY, EXPIRE, MINIMUM (RFC 1035 §3.3.13).
                if list == authority, ldns_rr_get_type(rr) == LDNS_RR_TYPE_SOA, ldns_rr_rd_count(rr) == 7,
                   let minimum = ldns_rr_rdf(rr, 6), ldns_rdf_size(minimum) == 4 {
                    lifetime = min(lifetime, ldns_rdf2native_int32(minimum))
                    hasSOA = true
                }
            }
        }
        let negative = rcode == LDNS_RCODE_NXDOMAIN || ldns_pkt_ancount(packet) == 0
        guard !negative || hasSOA else { return nil }
        // A positive reply always has a record; a negative one an SOA.
        return lifetime
    }

    /// Whether `packet` is a response to `question`, class IN.
    private static func answers(_ packet: UnsafeMutablePointer<ldns_pkt>, _ question: ForwardedQuestion) -> Bool {
        guard ldns_pkt_qr(packet), ldns_pkt_qdcount(packet) == 1, let asked = ldns_rr_list_rr(ldns_pkt_question(packet), 0),
              ldns_rr_get_type(asked).rawValue == UInt32(question.type), ldns_rr_get_class(asked) == LDNS_RR_CLASS_IN,
              // The name is as ldns wrote it (ForwardedQuestion), so ldns reads it again (out of memory aside).
              let name = ldns_dname_new_frm_str(question.name.isEmpty ? "." : question.name + ".")
        else { return false }
        defer { ldns_rdf_deep_free(name) }
        return ldns_dname_compare(ldns_rr_owner(asked), name) == 0
    }
}
