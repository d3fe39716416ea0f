import CAres
import CLDNS

/// The queries HostPin sends for one name (RFC 1035 §4.1): built by c-ares for a ``HostName``, by ldns
/// for a forwarded question's name, which may hold `\DDD` escapes c-ares's builder does not read.
enum AddressQuery {
    /// The EDNS(0) UDP payload size HostPin advertises, in bytes: large enough for most answers, small
    /// enough to avoid IP fragmentation (RFC 6891 §6.2.5; the value of DNS Flag Day 2020). Larger answers
    /// come truncated and are asked again over TCP (RFC 7766 §5).
    static let udpPayloadSize: UInt16 = 1232

    /// One query for each of `types` of records of `name`, in that order: each with its own random ID, RD
    /// set (upstreams are recursive resolvers or the zone's authority; RFC 1035 §4.1.1), one question of
    /// class IN, and an OPT record advertising ``udpPayloadSize`` (RFC 6891 §6.1).
    ///
    /// Built by c-ares (`ares_create_query`), the library that sends them: a ``HostName`` holds only
    /// letters, digits, `-`, `_` and dots, which it reads as ldns does, for some 40% of the cost (one
    /// allocation per message; ldns makes a packet, its records and a buffer).
    ///
    /// With `dnssec`, DO (RFC 3225 §3: send DNSSEC records) and CD (RFC 4035 §3.2.2: HostPin validates the
    /// answer itself, so the upstream must hand over what it could not validate rather than SERVFAIL) are
    /// set in the built message: `ares_create_query` sets neither (``setDNSSECBits(in:)``).
    ///
    /// - Returns: The messages in wire format; `nil` only when c-ares cannot build them (out of memory:
    ///   every ``HostName`` is a valid query name).
    static func messages(for name: HostName, types: [RecordType], dnssec: Bool = false) -> [[UInt8]]? {
        var messages: [[UInt8]] = []
        messages.reserveCapacity(types.count)
        for type in types {
            var buffer: UnsafeMutablePointer<UInt8>?
            var length: Int32 = 0
            // c-ares 1.18's ares_send sends the ID it is given (1.34 sets its own) and takes the reply that
            // matches ID and question: an unpredictable ID keeps off-path forgeries out (RFC 5452 §4.3).
            guard hostpin_ares_create_query(name.text, Int32(type.rawValue), QueryID.next(),
                                            Int32(udpPayloadSize), &buffer, &length) == HOSTPIN_ARES_SUCCESS,
                  let buffer
            else { return nil }
            defer { ares_free_string(buffer) }
            var message = Array(UnsafeBufferPointer(start: buffer, count: Int(length)))
            if dnssec { guard setDNSSECBits(in: &message) else { return nil } }
            messages.append(message)
        }
        return messages
    }

    /// Sets CD in the header and DO in the OPT record of a query `ares_create_query` built (hand-written:
    /// c-ares 1.18 has no flag for either). Its message is the header, one question, and the OPT record
    /// last: root name, TYPE 41, CLASS the payload size, then the TTL field's extended RCODE, version and
    /// the 16 flag bits whose top one is DO (RFC 6891 §6.1.3), and RDLENGTH 0 — the last 11 octets.
    ///
    /// - Returns: `false` when the message does not end in such an OPT record (never for c-ares's queries).
    static func setDNSSECBits(in message: inout [UInt8]) -> Bool {
        let opt = message.count - 11
        guard opt >= 12, Int(message[10]) << 8 | Int(message[11]) >= 1, message[opt] == 0, message[opt + 1] == 0,
              message[opt + 2] == 41, message[opt + 9] == 0, message[opt + 10] == 0
        else { return false }
        message[3] |= 0x10  // CD, the second octet of flags (RFC 4035 §3.2.2)
        message[opt + 7] |= 0x80  // DO (RFC 3225 §3)
        return true
    }

    /// One query for each of `types` of records of `name`, as ``messages(for:types:)-(HostName,_)``
    /// builds them, by ldns.
    ///
    /// - Parameters:
    ///   - name: A ``ForwardedQuestion``'s name in presentation form (RFC 1035 §5.1 escapes), relative or
    ///     absolute.
    ///   - types: The record types asked for.
    ///   - dnssec: Set DO and CD (ldns's `ldns_pkt_set_edns_do`, `ldns_pkt_set_cd`), as for a ``HostName``.
    /// - Returns: The messages in wire format; `nil` only when ldns cannot build them (out of memory: every
    ///   ``ForwardedQuestion`` name is a valid query name).
    static func messages(for name: String, types: [RecordType], dnssec: Bool = false) -> [[UInt8]]? {
        var built: UnsafeMutablePointer<ldns_pkt>?
        guard ldns_pkt_query_new_frm_str(&built, name, LDNS_RR_TYPE_A, LDNS_RR_CLASS_IN, UInt16(LDNS_RD)) == LDNS_STATUS_OK,
              let packet = built, let question = ldns_rr_list_rr(ldns_pkt_question(packet), 0)
        else { return nil }
        defer { ldns_pkt_free(packet) }
        ldns_pkt_set_edns_udp_size(packet, udpPayloadSize)
        if dnssec {
            ldns_pkt_set_edns_do(packet, true)
            ldns_pkt_set_cd(packet, true)
        }
        // Not ldns_pkt2wire: it allocates a 64 KiB buffer for every message (a query is at most 12 + 259 + 11
        // octets; the buffer grows if ever needed), and builds a compression tree, of no use to a message
        // with one name (compression is optional, RFC 1035 §4.1.4).
        guard let buffer = ldns_buffer_new(512) else { return nil }
        defer { ldns_buffer_free(buffer) }
        var messages: [[UInt8]] = []
        messages.reserveCapacity(types.count)
        for type in types {
            // One packet, written once per type: the question's type and the ID change.
            ldns_rr_set_type(question, ldns_rr_type(rawValue: UInt32(type.rawValue)))
            // c-ares 1.18's ares_send sends the ID it is given (1.34 sets its own) and takes the reply that
            // matches ID and question: an unpredictable ID keeps off-path forgeries out (RFC 5452 §4.3).
            ldns_pkt_set_id(packet, QueryID.next())
            ldns_buffer_clear(buffer)
            guard ldns_pkt2buffer_wire_compress(buffer, packet, nil) == LDNS_STATUS_OK else { return nil }
            messages.append(Array(UnsafeBufferPointer(start: ldns_buffer_begin(buffer), count: ldns_buffer_position(buffer))))
        }
        return messages
    }
}
