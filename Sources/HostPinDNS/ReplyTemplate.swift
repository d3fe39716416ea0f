/// A response ldns wrote, kept to answer the same question again without ldns: a copy with the new
/// query's ID and name (its letter case: the 0x20 defence) written over the old ones and each record's
/// TTL counted down by the answer's age, at offsets found once when the template is made. Patching
/// octets at known offsets is the ``AnswerCache``'s logic, not a DNS codec: ldns wrote every octet.
struct ReplyTemplate: Sendable, Hashable {
    /// Where one record's TTL sits and its lifetime: its TTL at age 0 (already capped by the cache's
    /// TTL limits), from which the age is subtracted.
    struct TTLSlot: Sendable, Hashable {
        let offset: Int
        let lifetime: UInt32
    }

    let message: [UInt8]
    let slots: [TTLSlot]

    /// `message` with `lifetimes`, the TTLs at age 0 of its answer and authority records in order.
    ///
    /// - Returns: `nil` when the records do not walk (lengths past the end) or their number differs from
    ///   `lifetimes` (a truncated response, TC set, has none: then no slot).
    init?(message: [UInt8], lifetimes: [UInt32]) {
        guard let offsets = Self.ttlOffsets(in: message) else { return nil }
        let truncated = message[2] & 0x02 != 0
        if truncated, offsets.isEmpty {
            slots = []
        } else {
            guard offsets.count == lifetimes.count else { return nil }
            slots = zip(offsets, lifetimes).map { TTLSlot(offset: $0, lifetime: $1) }
        }
        self.message = message
    }

    /// The response to `query` (whose name is `nameLength` octets from octet 12, as in this template's
    /// message) with every record's TTL its lifetime less `age` seconds, at least 0 (as
    /// ``DNSAnswer/remainingTTL(_:age:ceiling:)`` counts it).
    func reply(to query: [UInt8], nameLength: Int, age: UInt32) -> [UInt8] {
        var reply = message
        reply.withUnsafeMutableBufferPointer { out in
            query.withUnsafeBufferPointer { query in
                out[0] = query[0]
                out[1] = query[1]
                for index in 12..<(12 + nameLength) { out[index] = query[index] }
            }
            for slot in slots {
                let ttl = slot.lifetime > age ? slot.lifetime - age : 0
                out[slot.offset] = UInt8(truncatingIfNeeded: ttl >> 24)
                out[slot.offset + 1] = UInt8(truncatingIfNeeded: ttl >> 16)
                out[slot.offset + 2] = UInt8(truncatingIfNeeded: ttl >> 8)
                out[slot.offset + 3] = UInt8(truncatingIfNeeded: ttl)
            }
        }
        return reply
    }

    /// The offsets of the TTL fields of the answer and authority records of `message` (RFC 1035 §4.1.3),
    /// in order; `nil` when a name or record runs past the end.
    static func ttlOffsets(in message: [UInt8]) -> [Int]? {
        guard message.count >= 12 else { return nil }
        func u16(_ at: Int) -> Int { Int(message[at]) << 8 | Int(message[at + 1]) }
        var at = 12
        /// Moves `at` past the name there (``WireName``).
        func skipName() -> Bool {
            guard let end = WireName.end(in: message, at: at) else { return false }
            at = end
            return true
        }
        for _ in 0..<u16(4) {
            guard skipName(), at + 4 <= message.count else { return nil }
            at += 4
        }
        var offsets: [Int] = []
        for _ in 0..<(u16(6) + u16(8)) {
            guard skipName(), at + 10 <= message.count else { return nil }
            offsets.append(at + 4)
            at += 10 + u16(at + 8)
            guard at <= message.count else { return nil }
        }
        return offsets
    }
}
