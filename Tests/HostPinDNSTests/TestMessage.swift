import CLDNS

#if canImport(Glibc)
import Glibc
#endif

/// DNS messages for tests, built and read with ldns (the server's own code is what is under test).
enum TestMessage {
    /// A query for `name` (presentation form, case kept) of `type` and `dnsClass`, with ID `id`, RD set,
    /// and an OPT record advertising `udpSize` unless it is `nil`.
    static func query(_ name: String, type: UInt16 = 1, dnsClass: UInt16 = 1, id: UInt16 = 0x1234, udpSize: UInt16? = 1232,
                      ednsVersion: UInt8 = 0, recursionDesired: Bool = true, checkingDisabled: Bool = false,
                      opcode: UInt8 = 0, dnssecOK: Bool = false, authenticData: Bool = false) -> [UInt8] {
        var built: UnsafeMutablePointer<ldns_pkt>?
        let status = ldns_pkt_query_new_frm_str(&built, name, ldns_rr_type(rawValue: UInt32(type)),
                                                ldns_rr_class(rawValue: UInt32(dnsClass)), 0)
        precondition(status == LDNS_STATUS_OK, "ldns cannot build a query for \(name)")
        let packet = built!
        defer { ldns_pkt_free(packet) }
        ldns_pkt_set_id(packet, id)
        ldns_pkt_set_rd(packet, recursionDesired)
        ldns_pkt_set_cd(packet, checkingDisabled)
        ldns_pkt_set_ad(packet, authenticData)
        ldns_pkt_set_opcode(packet, ldns_pkt_opcode(rawValue: UInt32(opcode)))
        if let udpSize {
            ldns_pkt_set_edns_udp_size(packet, udpSize)
            ldns_pkt_set_edns_version(packet, ednsVersion)
            ldns_pkt_set_edns_do(packet, dnssecOK)
        }
        return wire(packet)
    }

    /// The key the signed queries use: a name and a base64 secret that the stub does not hold.
    static let tsigKeyName = "hostpin-test-key."
    static let tsigSecret = "c2VjcmV0LXRoZS1zdHViLWRvZXMtbm90LWhvbGQ="

    /// A query for `name` signed with TSIG by ldns (hmac-sha256, ``tsigKeyName``, fudge 300, RFC 8945 §4),
    /// with an OPT record unless `udpSize` is `nil` (ldns writes the TSIG after it, last).
    static func signedQuery(_ name: String, id: UInt16 = 0x1234, udpSize: UInt16? = 1232) -> [UInt8] {
        var built: UnsafeMutablePointer<ldns_pkt>?
        precondition(ldns_pkt_query_new_frm_str(&built, name, LDNS_RR_TYPE_A, LDNS_RR_CLASS_IN, 0) == LDNS_STATUS_OK)
        let packet = built!
        defer { ldns_pkt_free(packet) }
        ldns_pkt_set_id(packet, id)
        ldns_pkt_set_rd(packet, true)
        if let udpSize { ldns_pkt_set_edns_udp_size(packet, udpSize) }
        precondition(ldns_pkt_tsig_sign(packet, tsigKeyName, tsigSecret, 300, "hmac-sha256.", nil) == LDNS_STATUS_OK)
        return wire(packet)
    }

    /// A signed query (no OPT) whose TSIG is not the last additional record: followed by `trailer`, an OPT
    /// record or the same TSIG again, with ARCOUNT counting it.
    static func signedQuery(_ name: String, followedBy trailer: SignedTrailer) -> [UInt8] {
        var wire = signedQuery(name, udpSize: nil)
        let tsigStart = 12 + name.split(separator: ".").reduce(1) { $0 + 1 + $1.utf8.count } + 4
        switch trailer {
        case .opt: wire += [0, 0, 41, 0x04, 0xD0, 0, 0, 0, 0, 0, 0]
        case .tsig: wire += wire[tsigStart...]
        }
        wire[11] += 1
        return wire
    }

    enum SignedTrailer: Sendable, CaseIterable {
        case opt, tsig
    }

    static func wire(_ packet: UnsafeMutablePointer<ldns_pkt>) -> [UInt8] {
        var bytes: UnsafeMutablePointer<UInt8>?
        var size = 0
        precondition(ldns_pkt2wire(&bytes, packet, &size) == LDNS_STATUS_OK)
        defer { free(bytes) }
        return Array(UnsafeBufferPointer(start: bytes, count: size))
    }
}

/// A response as a test reads it (with ldns).
struct TestResponse: CustomStringConvertible {
    struct Record: Equatable, CustomStringConvertible {
        /// Presentation form with the final dot, as sent (case kept).
        let owner: String
        let type: UInt16
        let ttl: UInt32
        /// The RDATA fields in presentation form, joined by spaces: `127.0.0.10`, `www.example.test.`.
        let data: String

        var description: String { "\(owner) \(ttl) TYPE\(type) \(data)" }
    }

    let id: UInt16
    let isResponse: Bool
    let opcode: UInt8
    let authoritative: Bool
    let truncated: Bool
    let recursionDesired: Bool
    let recursionAvailable: Bool
    let checkingDisabled: Bool
    let authenticData: Bool
    /// The full RCODE: the header's 4 bits and the OPT record's 8.
    let rcode: UInt16
    let questions: [(name: String, type: UInt16, dnsClass: UInt16)]
    let answers: [Record]
    let authority: [Record]
    /// The OPT record's UDP payload size; `nil` without one.
    let udpSize: UInt16?
    /// The TSIG record (RFC 8945 §4.2), which ldns keeps apart from the additional section; `nil` without one.
    let tsig: TSIG?
    /// The OPT record's DO bit (RFC 3225).
    let dnssecOK: Bool
    /// The OPT record's RDATA, its options as on the wire; empty without any.
    let ednsOptions: [UInt8]

    /// The Extended DNS Error option (RFC 8914, code 15): INFO-CODE and EXTRA-TEXT; `nil` without one.
    var extendedError: (code: UInt16, text: String)? {
        var index = 0
        while index + 4 <= ednsOptions.count {
            let code = UInt16(ednsOptions[index]) << 8 | UInt16(ednsOptions[index + 1])
            let length = Int(ednsOptions[index + 2]) << 8 | Int(ednsOptions[index + 3])
            let body = ednsOptions.dropFirst(index + 4).prefix(length)
            if code == 15, body.count >= 2 {
                return (UInt16(body[body.startIndex]) << 8 | UInt16(body[body.startIndex + 1]),
                        String(decoding: body.dropFirst(2), as: UTF8.self))
            }
            index += 4 + length
        }
        return nil
    }

    /// A TSIG record's fields.
    struct TSIG: Equatable {
        let keyName: String
        let algorithm: String
        let timeSigned: UInt64
        let fudge: UInt16
        let macSize: Int
        let originalID: UInt16
        let error: UInt16
        let otherLength: Int
    }

    init?(_ wire: [UInt8]) {
        var parsed: UnsafeMutablePointer<ldns_pkt>?
        guard wire.withUnsafeBufferPointer({ ldns_wire2pkt(&parsed, $0.baseAddress, $0.count) }) == LDNS_STATUS_OK,
              let packet = parsed else { return nil }
        defer { ldns_pkt_free(packet) }
        id = ldns_pkt_id(packet)
        isResponse = ldns_pkt_qr(packet)
        opcode = UInt8(ldns_pkt_get_opcode(packet).rawValue)
        authoritative = ldns_pkt_aa(packet)
        truncated = ldns_pkt_tc(packet)
        recursionDesired = ldns_pkt_rd(packet)
        recursionAvailable = ldns_pkt_ra(packet)
        checkingDisabled = ldns_pkt_cd(packet)
        authenticData = ldns_pkt_ad(packet)
        tsig = ldns_pkt_tsig(packet).flatMap(Self.tsig)
        rcode = UInt16(ldns_pkt_edns_extended_rcode(packet)) << 4 | UInt16(ldns_pkt_get_rcode(packet).rawValue)
        udpSize = ldns_pkt_edns(packet) ? ldns_pkt_edns_udp_size(packet) : nil
        dnssecOK = ldns_pkt_edns_do(packet)
        ednsOptions = ldns_pkt_edns_data(packet).map { Array(UnsafeBufferPointer(start: ldns_rdf_data($0), count: ldns_rdf_size($0))) } ?? []
        let question = ldns_pkt_question(packet)
        questions = (0..<ldns_rr_list_rr_count(question)).map { index in
            let rr = ldns_rr_list_rr(question, index)
            return (Self.text(ldns_rr_owner(rr)), UInt16(ldns_rr_get_type(rr).rawValue), UInt16(ldns_rr_get_class(rr).rawValue))
        }
        answers = Self.records(ldns_pkt_answer(packet))
        authority = Self.records(ldns_pkt_authority(packet))
    }

    /// The fields of a TSIG record, read from its seven RDATA fields as ldns holds them.
    private static func tsig(_ rr: UnsafeMutablePointer<ldns_rr>) -> TSIG? {
        guard ldns_rr_rd_count(rr) == 7 else { return nil }
        func bytes(_ index: Int) -> [UInt8] {
            let rdf = ldns_rr_rdf(rr, index)
            return Array(UnsafeBufferPointer(start: ldns_rdf_data(rdf), count: ldns_rdf_size(rdf)))
        }
        func number(_ octets: [UInt8]) -> UInt64 { octets.reduce(0) { $0 << 8 | UInt64($1) } }
        return TSIG(keyName: text(ldns_rr_owner(rr)), algorithm: text(ldns_rr_rdf(rr, 0)), timeSigned: number(bytes(1)),
                    fudge: UInt16(number(bytes(2))), macSize: Int(number(Array(bytes(3).prefix(2)))),
                    originalID: UInt16(number(bytes(4))), error: UInt16(number(bytes(5))),
                    otherLength: Int(number(Array(bytes(6).prefix(2)))))
    }

    private static func records(_ list: UnsafeMutablePointer<ldns_rr_list>?) -> [Record] {
        (0..<ldns_rr_list_rr_count(list)).map { index in
            let rr = ldns_rr_list_rr(list, index)
            let data = (0..<ldns_rr_rd_count(rr)).map { text(ldns_rr_rdf(rr, $0)) }.joined(separator: " ")
            return Record(owner: text(ldns_rr_owner(rr)), type: UInt16(ldns_rr_get_type(rr).rawValue), ttl: ldns_rr_ttl(rr), data: data)
        }
    }

    private static func text(_ rdf: UnsafeMutablePointer<ldns_rdf>?) -> String {
        guard let rdf, let text = ldns_rdf2str(rdf) else { return "" }
        defer { free(text) }
        return String(cString: text)
    }

    /// The answer records' data of `type`, in order: `["127.0.0.10"]`.
    func data(ofType type: UInt16) -> [String] {
        answers.filter { $0.type == type }.map(\.data)
    }

    var description: String {
        "id \(id) rcode \(rcode)\(truncated ? " TC" : "") answers \(answers) authority \(authority)"
    }
}
