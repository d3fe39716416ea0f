import CLDNS
import HostPin

/// Writes HostPin's responses with ldns (RFC 1035 §4): the query's ID, OPCODE, RD and CD echoed, QR and
/// RA set, AA clear (HostPin is no zone's authority), the question exactly as asked, and an OPT record
/// (RFC 6891 §6.1.1) only when the query had one. To an opcode other than QUERY, RA and CD stay clear:
/// they speak of recursion and DNSSEC checking, which only QUERY has (Unbound sets neither either).
///
/// A response larger than the client can take is sent without records and with TC set (RFC 2181 §9,
/// RFC 6891 §7): the client asks again over TCP (RFC 7766 §5).
enum ResponseWriter {
    /// `answer` as the response to `header` and `question`.
    ///
    /// - Parameters:
    ///   - limit: The largest response the client takes, in octets (see ``DNSTransport``).
    ///   - udpPayloadSize: The UDP payload size HostPin advertises in its OPT record.
    ///   - tsig: The query's TSIG, for an unsigned TSIG error BADKEY (RFC 8945 §5.3.2) last in the
    ///     additional section; `nil` for none.
    /// - Returns: The message; `nil` when ldns cannot build it (out of memory, or a CNAME target that is
    ///   no domain name).
    static func write(_ answer: DNSAnswer, to header: DNSRequestHeader, question: DNSQuestion?, limit: Int,
                      udpPayloadSize: UInt16, tsig: TSIGRecord? = nil) -> [UInt8]? {
        let frame = Frame(header: header, question: question, rcode: answer.rcode.rawValue, udpPayloadSize: udpPayloadSize,
                          tsig: tsig, secure: answer.secure, extendedError: answer.extendedError)
        return frame.write(limit: limit) { packet, owner in
            for (section, records) in [(LDNS_SECTION_ANSWER, answer.records), (LDNS_SECTION_AUTHORITY, answer.authority)] {
                for record in records {
                    guard let rr = self.rr(record, question: owner) else { return false }
                    ldns_pkt_push_rr(packet, section, rr)
                }
            }
            return true
        }
    }

    /// A forwarder's `reply` (a whole DNS message) as the response to `query`: its RCODE and its answer,
    /// authority and additional records, under this query's header and question.
    ///
    /// With validation on the upstream was asked with DO, so the reply holds RRSIGs and NSEC/NSEC3
    /// records: they are relayed to a client that set DO (a validating client behind the stub checks them
    /// itself) and left out for one that did not (RFC 4035 §3.2.1), but for answer records of the very
    /// type asked (a query for RRSIG or NSEC asks for them explicitly).
    ///
    /// - Parameters:
    ///   - age: The whole seconds the reply has been cached: every record's TTL is that much lower, at
    ///     least 0.
    ///   - dnssec: What validation found for it: ``HostPin/DNSSECStatus/secure`` sets AD for a query with
    ///     AD or DO (RFC 6840 §5.8); nothing else does.
    ///   - extendedError: An Extended DNS Error to add for a client that sent EDNS (RFC 8914): 27 for an
    ///     answer insecure because of its NSEC3 iterations; `nil` for none.
    /// - Returns: The message; `nil` when `reply` is not a response to this question (it does not read,
    ///   QR is clear, or its question differs), for the caller to answer SERVFAIL.
    static func relay(_ reply: [UInt8], to query: DNSQuery, age: UInt32 = 0, dnssec: DNSSECStatus? = nil,
                      extendedError: ExtendedDNSError? = nil, limit: Int, udpPayloadSize: UInt16) -> [UInt8]? {
        var parsed: UnsafeMutablePointer<ldns_pkt>?
        let status = reply.withUnsafeBufferPointer { ldns_wire2pkt(&parsed, $0.baseAddress, $0.count) }
        guard status == LDNS_STATUS_OK, let source = parsed else { return nil }
        defer { ldns_pkt_free(source) }
        guard ldns_pkt_qr(source), ldns_pkt_qdcount(source) == 1, let asked = ldns_rr_list_rr(ldns_pkt_question(source), 0),
              ldns_rr_get_type(asked).rawValue == UInt32(query.question.type.rawValue),
              ldns_rr_get_class(asked).rawValue == UInt32(query.question.dnsClass),
              let mine = rdf(wireName: query.question.wireName)
        else { return nil }
        defer { ldns_rdf_deep_free(mine) }
        guard ldns_dname_compare(ldns_rr_owner(asked), mine) == 0 else { return nil }
        var rcode = UInt16(ldns_pkt_edns_extended_rcode(source)) << 4 | UInt16(ldns_pkt_get_rcode(source).rawValue & 0xF)
        // An extended RCODE needs an OPT record to travel in; a client without EDNS gets SERVFAIL instead.
        if rcode > 15, query.header.edns == nil { rcode = DNSResponseCode.servfail.rawValue }
        let frame = Frame(header: query.header, question: query.question, rcode: rcode, udpPayloadSize: udpPayloadSize,
                          secure: dnssec == .secure, extendedError: extendedError)
        let keepsDNSSEC = query.header.dnssecOK
        let askedType = UInt32(query.question.type.rawValue)
        return frame.write(limit: limit) { packet, _ in
            let sections = [(LDNS_SECTION_ANSWER, ldns_pkt_answer(source)), (LDNS_SECTION_AUTHORITY, ldns_pkt_authority(source)),
                            (LDNS_SECTION_ADDITIONAL, ldns_pkt_additional(source))]
            for (section, list) in sections {
                for index in 0..<(list.map { ldns_rr_list_rr_count($0) } ?? 0) {
                    let record = ldns_rr_list_rr(list, index)
                    let type = ldns_rr_get_type(record).rawValue
                    if !keepsDNSSEC, Self.dnssecTypes.contains(type), section != LDNS_SECTION_ANSWER || type != askedType {
                        continue
                    }
                    guard let rr = ldns_rr_clone(record) else { return false }
                    let ttl = ldns_rr_ttl(rr)
                    ldns_rr_set_ttl(rr, ttl > age ? ttl - age : 0)
                    ldns_pkt_push_rr(packet, section, rr)
                }
            }
            return true
        }
    }

    /// The DNSSEC record types a client without DO does not get (RFC 4035 §3.2.1): RRSIG, NSEC, NSEC3.
    private static let dnssecTypes: Set<UInt32> = [LDNS_RR_TYPE_RRSIG.rawValue, LDNS_RR_TYPE_NSEC.rawValue,
                                                   LDNS_RR_TYPE_NSEC3.rawValue]

    /// The parts every response shares, and the two writes (full, then truncated) of one response.
    private struct Frame {
        let header: DNSRequestHeader
        let question: DNSQuestion?
        /// The 12-bit RCODE: the low 4 bits in the header, the rest in the OPT record.
        let rcode: UInt16
        let udpPayloadSize: UInt16
        /// The query's TSIG, answered with an unsigned BADKEY; `nil` for none.
        var tsig: TSIGRecord? = nil
        /// The answer validated secure: AD is set when the query asked for it (RFC 6840 §5.8).
        var secure = false
        /// The Extended DNS Error the OPT record carries, when the query had one (RFC 8914).
        var extendedError: ExtendedDNSError? = nil

        /// Writes the response with the records `fill` adds (given the packet and the question's owner
        /// name), or, when that is longer than `limit`, without them and with TC set.
        func write(limit: Int,
                   fill: (UnsafeMutablePointer<ldns_pkt>, UnsafeMutablePointer<ldns_rdf>?) -> Bool) -> [UInt8]? {
            guard let full = message(truncated: false, fill: fill) else { return nil }
            return full.count <= limit ? full : message(truncated: true, fill: fill)
        }

        private func message(truncated: Bool,
                             fill: (UnsafeMutablePointer<ldns_pkt>, UnsafeMutablePointer<ldns_rdf>?) -> Bool) -> [UInt8]? {
            guard let packet = ldns_pkt_new() else { return nil }
            defer { ldns_pkt_free(packet) }
            ldns_pkt_set_id(packet, header.id)
            ldns_pkt_set_qr(packet, true)
            ldns_pkt_set_opcode(packet, ldns_pkt_opcode(rawValue: UInt32(header.opcode)))
            ldns_pkt_set_rd(packet, header.recursionDesired)
            let isQuery = header.opcode == DNSRequestHeader.queryOpcode
            ldns_pkt_set_cd(packet, header.checkingDisabled && isQuery)
            ldns_pkt_set_ra(packet, isQuery)
            ldns_pkt_set_ad(packet, secure && isQuery && header.wantsAuthenticatedData)
            ldns_pkt_set_tc(packet, truncated)
            ldns_pkt_set_rcode(packet, UInt8(rcode & 0xF))
            if header.edns != nil {
                ldns_pkt_set_edns_udp_size(packet, udpPayloadSize)
                ldns_pkt_set_edns_extended_rcode(packet, UInt8(truncatingIfNeeded: rcode >> 4))
                // The response's DO echoes the query's (RFC 3225 §3).
                ldns_pkt_set_edns_do(packet, header.dnssecOK)
                if let option = extendedError?.option {
                    // The OPT RDATA as one rdf, which the packet frees.
                    guard let data = option.withUnsafeBufferPointer({
                        ldns_rdf_new_frm_data(LDNS_RDF_TYPE_UNKNOWN, $0.count, $0.baseAddress)
                    }) else { return nil }
                    ldns_pkt_set_edns_data(packet, data)
                }
            }
            var owner: UnsafeMutablePointer<ldns_rdf>?
            if let question {
                guard let rr = ldns_rr_new(), let name = rdf(wireName: question.wireName) else { return nil }
                ldns_rr_set_owner(rr, name)
                ldns_rr_set_type(rr, ldns_rr_type(rawValue: UInt32(question.type.rawValue)))
                ldns_rr_set_class(rr, ldns_rr_class(rawValue: UInt32(question.dnsClass)))
                ldns_rr_set_question(rr, true)
                ldns_pkt_push_rr(packet, LDNS_SECTION_QUESTION, rr)
                owner = name
            }
            if !truncated, !fill(packet, owner) { return nil }
            if let tsig {
                // ldns writes the packet's TSIG last, after the OPT record, and frees it with the packet.
                guard let rr = ResponseWriter.unsignedError(tsig) else { return nil }
                ldns_pkt_set_tsig(packet, rr)
            }
            // ldns_pkt2wire would allocate 64 KiB for each message; this buffer grows when it must.
            guard let buffer = ldns_buffer_new(512) else { return nil }
            defer { ldns_buffer_free(buffer) }
            guard ldns_pkt2buffer_wire(buffer, packet) == LDNS_STATUS_OK, ldns_buffer_status_ok(buffer) else { return nil }
            return Array(UnsafeBufferPointer(start: ldns_buffer_begin(buffer), count: ldns_buffer_position(buffer)))
        }
    }

    /// The TSIG of an unsigned error response to a query signed with `query`'s key (RFC 8945 §5.3.2):
    /// the same key and algorithm names, Time Signed and Fudge as the query's, MAC size 0, the Original
    /// ID, error BADKEY, no other data; class ANY, TTL 0 (§4.2). Built field by field as ldns's own
    /// `ldns_tsig_prepare_pkt_wire` builds a signed one; `nil` when ldns cannot build it.
    static func unsignedError(_ query: TSIGRecord) -> UnsafeMutablePointer<ldns_rr>? {
        let time = (0..<6).map { UInt8(truncatingIfNeeded: query.timeSigned >> (8 * (5 - $0))) }
        let rdfs: [UnsafeMutablePointer<ldns_rdf>?] = [
            query.algorithm.withUnsafeBufferPointer { ldns_rdf_new_frm_data(LDNS_RDF_TYPE_DNAME, $0.count, $0.baseAddress) },
            time.withUnsafeBufferPointer { ldns_rdf_new_frm_data(LDNS_RDF_TYPE_TSIGTIME, $0.count, $0.baseAddress) },
            ldns_native2rdf_int16(LDNS_RDF_TYPE_INT16, query.fudge),
            ldns_native2rdf_int16_data(0, nil),  // MAC size 0, no MAC
            ldns_native2rdf_int16(LDNS_RDF_TYPE_INT16, query.originalID),
            ldns_native2rdf_int16(LDNS_RDF_TYPE_INT16, TSIGRecord.badKey),
            ldns_native2rdf_int16_data(0, nil),  // other len 0
        ]
        let owner = rdf(wireName: query.keyName)
        guard let owner, rdfs.allSatisfy({ $0 != nil }), let rr = ldns_rr_new() else {
            owner.map(ldns_rdf_deep_free)
            rdfs.forEach { $0.map(ldns_rdf_deep_free) }
            return nil
        }
        ldns_rr_set_owner(rr, owner)
        ldns_rr_set_type(rr, LDNS_RR_TYPE_TSIG)
        ldns_rr_set_class(rr, LDNS_RR_CLASS_ANY)
        ldns_rr_set_ttl(rr, 0)
        for rdf in rdfs { ldns_rr_push_rdf(rr, rdf) }
        return rr
    }

    /// One record, class IN; `nil` when ldns cannot build it.
    private static func rr(_ record: DNSRecord, question owner: UnsafeMutablePointer<ldns_rdf>?) -> UnsafeMutablePointer<ldns_rr>? {
        let ownerName: UnsafeMutablePointer<ldns_rdf>? = switch record.owner {
        case .question: owner.flatMap { ldns_rdf_clone($0) }
        case .name(let name): dname(name)
        }
        guard let ownerName else { return nil }
        guard let rr = ldns_rr_new() else {
            ldns_rdf_deep_free(ownerName)
            return nil
        }
        ldns_rr_set_owner(rr, ownerName)
        ldns_rr_set_ttl(rr, record.ttl)
        ldns_rr_set_class(rr, LDNS_RR_CLASS_IN)
        ldns_rr_set_type(rr, ldns_rr_type(rawValue: UInt32(record.data.type.rawValue)))
        let rdfs: [UnsafeMutablePointer<ldns_rdf>?] = switch record.data {
        case .address(let address):
            address.bytes.withUnsafeBufferPointer { bytes in
                [ldns_rdf_new_frm_data(address.family == .v4 ? LDNS_RDF_TYPE_A : LDNS_RDF_TYPE_AAAA, bytes.count, bytes.baseAddress)]
            }
        case .canonicalName(let target):
            [dname(target)]
        case .hostInfo(let cpu, let os):
            [ldns_rdf_new_frm_str(LDNS_RDF_TYPE_STR, cpu), ldns_rdf_new_frm_str(LDNS_RDF_TYPE_STR, os)]
        case .startOfAuthority(let soa):
            // MNAME, RNAME, SERIAL, then REFRESH, RETRY, EXPIRE and MINIMUM, which ldns types as periods.
            [dname(soa.primaryServer), dname(soa.mailbox), ldns_native2rdf_int32(LDNS_RDF_TYPE_INT32, soa.serial)]
                + [soa.refresh, soa.retry, soa.expire, soa.minimum].map { ldns_native2rdf_int32(LDNS_RDF_TYPE_PERIOD, $0) }
        }
        guard rdfs.allSatisfy({ $0 != nil }) else {
            rdfs.forEach { $0.map(ldns_rdf_deep_free) }
            ldns_rr_free(rr)
            return nil
        }
        for rdf in rdfs { ldns_rr_push_rdf(rr, rdf) }
        return rr
    }

    /// A domain name rdf from presentation form, the root written as the empty string; `nil` when ldns
    /// cannot read it.
    private static func dname(_ name: String) -> UnsafeMutablePointer<ldns_rdf>? {
        ldns_dname_new_frm_str(name.isEmpty ? "." : name)
    }

    /// A domain name rdf holding `wireName` as it is (ldns compares names case-insensitively, and
    /// compresses the answer's owner names to point at it).
    private static func rdf(wireName: [UInt8]) -> UnsafeMutablePointer<ldns_rdf>? {
        wireName.withUnsafeBufferPointer { ldns_rdf_new_frm_data(LDNS_RDF_TYPE_DNAME, $0.count, $0.baseAddress) }
    }
}
