import CLDNS
import HostPin

extension IncomingMessage {
    /// Reads `wire`, one whole DNS message (RFC 1035 §4), with ldns.
    ///
    /// ldns checks what a hostile message can break: labels of at most 63 octets, names of at most 255,
    /// compression pointers that stay inside the message (a pointer loop ends after ldns's pointer limit),
    /// and section counts that the message actually holds. A message it cannot read is answered FORMERR
    /// when its header reads, so the client stops waiting; so is one with more than one OPT record
    /// (RFC 6891 §6.1.1) or a TSIG record that is not the last (RFC 8945 §5.2), its question echoed. A
    /// signed message (one TSIG, last) is ``unknownKey(_:question:_:)``, checked before its opcode.
    init(wire: [UInt8]) {
        guard wire.count >= 12 else {
            self = .drop(.noHeader)
            return
        }
        if case .misplaced(let firstTSIG) = TSIGPlacement(wire: wire) {
            self = Self.misplacedTSIG(wire, before: firstTSIG)
            return
        }
        var parsed: UnsafeMutablePointer<ldns_pkt>?
        let status = wire.withUnsafeBufferPointer { ldns_wire2pkt(&parsed, $0.baseAddress, $0.count) }
        guard status == LDNS_STATUS_OK, let packet = parsed else {
            self = Self.unreadable(wire)
            return
        }
        defer { ldns_pkt_free(packet) }
        if ldns_pkt_qr(packet) {
            self = .drop(.response)
            return
        }
        let header = Self.header(of: packet)
        let question = ldns_pkt_qdcount(packet) == 1 ? Self.question(of: packet) : nil
        if Self.optRecords(in: packet, wire: wire) > 1 {
            self = .reject(header, question: question, .formerr)  // RFC 6891 §6.1.1
        } else if let tsig = ldns_pkt_tsig(packet) {
            guard let record = Self.tsigRecord(tsig) else {
                self = .reject(header, question: question, .formerr)
                return
            }
            self = .unknownKey(header, question: question, record)
        } else if header.opcode != DNSRequestHeader.queryOpcode {
            self = .reject(header, question: question, .notimp)
        } else if let question {
            self = .query(DNSQuery(header: header, question: question))
        } else {
            self = .reject(header, question: nil, .formerr)
        }
    }

    /// A message whose sections do not read: its header alone, read by ldns from a copy whose four
    /// section counts are zero (octets 4-11, RFC 1035 §4.1.1), answered FORMERR unless it is a response.
    private static func unreadable(_ wire: [UInt8]) -> IncomingMessage {
        let headerOnly = Array(wire.prefix(4)) + [UInt8](repeating: 0, count: 8)
        var parsed: UnsafeMutablePointer<ldns_pkt>?
        let status = headerOnly.withUnsafeBufferPointer { ldns_wire2pkt(&parsed, $0.baseAddress, $0.count) }
        guard status == LDNS_STATUS_OK, let packet = parsed else { return .drop(.noHeader) }
        defer { ldns_pkt_free(packet) }
        if ldns_pkt_qr(packet) { return .drop(.response) }
        return .reject(header(of: packet), question: nil, .formerr)
    }

    /// A message whose TSIG is not the last additional record, or one of several (RFC 8945 §5.2: FORMERR):
    /// read by ldns from a copy whose ARCOUNT stops before the first TSIG (octets 10-11), so that ldns,
    /// which keeps one TSIG apart and loses a second, sees none; its header, EDNS and question answered.
    private static func misplacedTSIG(_ wire: [UInt8], before firstTSIG: Int) -> IncomingMessage {
        var copy = wire
        copy[10] = UInt8(truncatingIfNeeded: firstTSIG >> 8)
        copy[11] = UInt8(truncatingIfNeeded: firstTSIG)
        var parsed: UnsafeMutablePointer<ldns_pkt>?
        let status = copy.withUnsafeBufferPointer { ldns_wire2pkt(&parsed, $0.baseAddress, $0.count) }
        guard status == LDNS_STATUS_OK, let packet = parsed else { return unreadable(wire) }
        defer { ldns_pkt_free(packet) }
        if ldns_pkt_qr(packet) { return .drop(.response) }
        return .reject(header(of: packet), question: ldns_pkt_qdcount(packet) == 1 ? question(of: packet) : nil, .formerr)
    }

    /// The fields of the TSIG record ldns read (its seven RDATA fields as ldns types them: algorithm
    /// DNAME, TSIGTIME, fudge INT16, MAC INT16_DATA, original ID INT16, error INT16, other INT16_DATA);
    /// `nil` when they are not all there.
    private static func tsigRecord(_ rr: UnsafeMutablePointer<ldns_rr>) -> TSIGRecord? {
        guard ldns_rr_rd_count(rr) == 7, let owner = ldns_rr_owner(rr), let algorithm = ldns_rr_rdf(rr, 0),
              let time = ldns_rr_rdf(rr, 1), ldns_rdf_size(time) == 6,
              let fudge = ldns_rr_rdf(rr, 2), ldns_rdf_size(fudge) == 2,
              let originalID = ldns_rr_rdf(rr, 4), ldns_rdf_size(originalID) == 2
        else { return nil }
        func bytes(_ rdf: UnsafeMutablePointer<ldns_rdf>) -> [UInt8] {
            Array(UnsafeBufferPointer(start: ldns_rdf_data(rdf), count: ldns_rdf_size(rdf)))
        }
        return TSIGRecord(keyName: bytes(owner), algorithm: bytes(algorithm),
                          timeSigned: bytes(time).reduce(0) { $0 << 8 | UInt64($1) },
                          fudge: ldns_rdf2native_int16(fudge), originalID: ldns_rdf2native_int16(originalID))
    }

    /// How many OPT records the additional section of `wire` holds. ldns takes every OPT record out of
    /// that section as it reads it (keeping the last one's fields as the packet's EDNS) and counts them in
    /// one octet, which wraps at 256; a TSIG record it keeps apart. So the OPT records are the header's
    /// ARCOUNT less the records left in the section and the TSIG (ldns reads one record fewer after a
    /// TSIG; a message whose TSIG is not last never gets here: ``TSIGPlacement``).
    private static func optRecords(in packet: UnsafeMutablePointer<ldns_pkt>, wire: [UInt8]) -> Int {
        let arcount = Int(wire[10]) << 8 | Int(wire[11])
        return arcount - ldns_rr_list_rr_count(ldns_pkt_additional(packet)) - (ldns_pkt_tsig(packet) == nil ? 0 : 1)
    }

    private static func header(of packet: UnsafeMutablePointer<ldns_pkt>) -> DNSRequestHeader {
        let edns = ldns_pkt_edns(packet)
            ? DNSRequestHeader.EDNS(udpPayloadSize: ldns_pkt_edns_udp_size(packet), version: ldns_pkt_edns_version(packet),
                                    dnssecOK: ldns_pkt_edns_do(packet))
            : nil
        return DNSRequestHeader(id: ldns_pkt_id(packet),
                                opcode: UInt8(truncatingIfNeeded: ldns_pkt_get_opcode(packet).rawValue),
                                recursionDesired: ldns_pkt_rd(packet), checkingDisabled: ldns_pkt_cd(packet),
                                authenticatedData: ldns_pkt_ad(packet), edns: edns)
    }

    private static func question(of packet: UnsafeMutablePointer<ldns_pkt>) -> DNSQuestion? {
        guard let rr = ldns_rr_list_rr(ldns_pkt_question(packet), 0), let owner = ldns_rr_owner(rr),
              let data = ldns_rdf_data(owner), let name = DomainNameText.of(owner, keepingCase: true)
        else { return nil }
        return DNSQuestion(wireName: Array(UnsafeBufferPointer(start: data, count: ldns_rdf_size(owner))), name: name,
                           type: DNSType(rawValue: UInt16(truncatingIfNeeded: ldns_rr_get_type(rr).rawValue)),
                           dnsClass: UInt16(truncatingIfNeeded: ldns_rr_get_class(rr).rawValue))
    }
}
