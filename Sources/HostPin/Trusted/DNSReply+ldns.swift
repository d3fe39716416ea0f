import CLDNS

extension DNSReply {
    /// Reads `wire`, a whole DNS message (RFC 1035 §4), with ldns.
    ///
    /// - Parameter readingDNSSEC: Also keep the answer and authority sections as ``DNSSECRecord``s
    ///   (``signedAnswer``, ``signedAuthority``) for the validator, from the same parse: one parse per reply.
    /// - Returns: `nil` when ldns cannot parse it (cut short, counts that do not match the sections, a
    ///   bad name), or when an A or AAAA record's RDATA is not one address of its family.
    init?(wire: [UInt8], readingDNSSEC: Bool = false) {
        var parsed: UnsafeMutablePointer<ldns_pkt>?
        let status = wire.withUnsafeBufferPointer { ldns_wire2pkt(&parsed, $0.baseAddress, $0.count) }
        guard status == LDNS_STATUS_OK, let packet = parsed else { return nil }
        defer { ldns_pkt_free(packet) }
        guard let questions = Self.questions(ldns_pkt_question(packet)),
              let answers = Self.records(ldns_pkt_answer(packet)),
              let authority = Self.records(ldns_pkt_authority(packet))
        else { return nil }
        self.init(isResponse: ldns_pkt_qr(packet),
                  opcode: UInt8(truncatingIfNeeded: ldns_pkt_get_opcode(packet).rawValue),
                  isTruncated: ldns_pkt_tc(packet),
                  rcode: UInt16(ldns_pkt_edns_extended_rcode(packet)) << 4
                      | UInt16(truncatingIfNeeded: ldns_pkt_get_rcode(packet).rawValue),
                  questions: questions, answers: answers, authority: authority)
        if readingDNSSEC {
            signedAnswer = Self.signedRecords(ldns_pkt_answer(packet))
            signedAuthority = Self.signedRecords(ldns_pkt_authority(packet))
        }
    }

    /// Every record of `list` as the validator reads it (``DNSSECRecord/init(_:)``: its uncompressed wire
    /// form); one ldns cannot write back is left out, and what it was part of then fails validation.
    private static func signedRecords(_ list: UnsafeMutablePointer<ldns_rr_list>?) -> [DNSSECRecord] {
        let count = list.map { ldns_rr_list_rr_count($0) } ?? 0
        var records: [DNSSECRecord] = []
        records.reserveCapacity(count)
        for index in 0..<count {
            if let rr = ldns_rr_list_rr(list, index), let record = DNSSECRecord(rr) { records.append(record) }
        }
        return records
    }

    private static func questions(_ list: UnsafeMutablePointer<ldns_rr_list>?) -> [Question]? {
        var questions: [Question] = []
        for index in 0..<(list.map { ldns_rr_list_rr_count($0) } ?? 0) {
            guard let rr = ldns_rr_list_rr(list, index), let name = name(ldns_rr_owner(rr)) else { return nil }
            questions.append(Question(name: name, type: RecordType(rawValue: UInt16(truncatingIfNeeded: ldns_rr_get_type(rr).rawValue)),
                                      dnsClass: UInt16(truncatingIfNeeded: ldns_rr_get_class(rr).rawValue)))
        }
        return questions
    }

    private static func records(_ list: UnsafeMutablePointer<ldns_rr_list>?) -> [Record]? {
        var records: [Record] = []
        let count = list.map { ldns_rr_list_rr_count($0) } ?? 0
        records.reserveCapacity(count)
        for index in 0..<count {
            guard let rr = ldns_rr_list_rr(list, index), let owner = name(ldns_rr_owner(rr)) else { return nil }
            let type = RecordType(rawValue: UInt16(truncatingIfNeeded: ldns_rr_get_type(rr).rawValue))
            guard let data = data(of: rr, type: type) else { return nil }
            records.append(Record(owner: owner, type: type,
                                  dnsClass: UInt16(truncatingIfNeeded: ldns_rr_get_class(rr).rawValue),
                                  ttl: ldns_rr_ttl(rr), data: data))
        }
        return records
    }

    /// The RDATA HostPin reads; `nil` when a record of those types does not hold what its type says.
    private static func data(of rr: UnsafeMutablePointer<ldns_rr>, type: RecordType) -> RecordData? {
        switch type {
        case .a, .aaaa:
            let family: IPAddress.Family = type == .a ? .v4 : .v6
            guard ldns_rr_rd_count(rr) == 1, let rdf = ldns_rr_rdf(rr, 0),
                  ldns_rdf_size(rdf) == (family == .v4 ? 4 : 16), let bytes = ldns_rdf_data(rdf)
            else { return nil }
            return .address(IPAddress(family: family, bytes: UnsafeBufferPointer(start: bytes, count: ldns_rdf_size(rdf))))
        case .cname:
            guard ldns_rr_rd_count(rr) == 1, let target = name(ldns_rr_rdf(rr, 0)) else { return nil }
            return .canonicalName(target)
        case .soa:
            // MNAME, RNAME, SERIAL, REFRESH, RETRY, EXPIRE, MINIMUM (RFC 1035 §3.3.13).
            guard ldns_rr_rd_count(rr) == 7, let primaryServer = name(ldns_rr_rdf(rr, 0)),
                  let mailbox = name(ldns_rr_rdf(rr, 1))
            else { return nil }
            var numbers: [UInt32] = []
            for index in 2..<7 {
                guard let field = ldns_rr_rdf(rr, index), ldns_rdf_size(field) == 4 else { return nil }
                numbers.append(ldns_rdf2native_int32(field))
            }
            return .soa(primaryServer: primaryServer, mailbox: mailbox, serial: numbers[0], refresh: numbers[1],
                        retry: numbers[2], expire: numbers[3], minimum: numbers[4])
        default:
            return .other
        }
    }

    /// A domain name in presentation form (ldns escapes odd octets, RFC 1035 §5.1), lower case, without
    /// the final dot of the root label: `www.example.test`; the root itself is the empty string.
    static func name(_ rdf: UnsafeMutablePointer<ldns_rdf>?) -> String? {
        DomainNameText.of(rdf, keepingCase: false)
    }
}
