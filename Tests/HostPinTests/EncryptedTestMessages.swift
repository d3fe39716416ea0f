/// DNS messages for the encrypted-transport tests: a query built from a fixed header literal and the
/// name's labels, and reads of a reply's header octets. Test fixtures, not a DNS library.
enum EncryptedTestMessages {
    /// A query for `name`, type A (1) unless told, class IN, RD set, no EDNS, with message ID `id`.
    static func query(_ name: String, id: UInt16 = 0x1234, type: UInt16 = 1) -> [UInt8] {
        var message: [UInt8] = [UInt8(id >> 8), UInt8(id & 0xFF), 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]
        for label in name.split(separator: ".") {
            message.append(UInt8(label.utf8.count))
            message += label.utf8
        }
        message += [0, UInt8(type >> 8), UInt8(type & 0xFF), 0, 1]
        return message
    }

    /// The reply's message ID.
    static func id(_ reply: [UInt8]) -> UInt16 { UInt16(reply[0]) << 8 | UInt16(reply[1]) }

    /// Whether the QR bit says "response".
    static func isResponse(_ reply: [UInt8]) -> Bool { reply[2] & 0x80 != 0 }

    /// The RCODE (0 NOERROR, 3 NXDOMAIN).
    static func rcode(_ reply: [UInt8]) -> Int { Int(reply[3] & 0x0F) }

    /// ANCOUNT.
    static func answerCount(_ reply: [UInt8]) -> Int { Int(reply[6]) << 8 | Int(reply[7]) }

    /// Whether the reply repeats `query`'s question section (which follows the 12-octet header of a
    /// query without EDNS) right after its own header: the reply is to that question.
    static func answers(_ reply: [UInt8], question query: [UInt8]) -> Bool {
        reply.count >= query.count && reply[12..<query.count] == query[12...]
    }

    /// Whether an A record's RDLENGTH 4 and RDATA `address` appear in the reply.
    static func carries(_ reply: [UInt8], address: [UInt8]) -> Bool {
        let needle: [UInt8] = [0, 4] + address
        return reply.count >= needle.count && (0...(reply.count - needle.count)).contains { reply[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
