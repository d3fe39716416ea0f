/// What a query's response depends on besides the trusted cache: the query's octets after its ID
/// (flags, counts, question, OPT record), its name lower-cased, and the transport. Two queries with
/// the same key get the same response but for the ID and the letter case of the name, which
/// ``ReplyTemplate`` writes in; so a key finds the ``AnswerCache`` entry of an earlier query.
///
/// Only plain queries have one: QR clear, OPCODE QUERY, one question whose name is written without
/// compression, no answer or authority records, at most one additional record (the OPT record), at most
/// ``maximumQuery`` octets. Whatever else the query says is in the key octet for octet, so a query that
/// differs in any way (EDNS size, DO, RD, CD, type, class) has a key of its own. The name is walked
/// label by label (each at most 63 octets, the name within the message) only to find its end; ldns still
/// reads every query that misses.
struct AnswerKey: Sendable, Hashable {
    /// Octets 2 to the end of the query, the name lower-cased (ASCII).
    let octets: [UInt8]
    let transport: DNSTransport
    /// The name's length in wire form, root label included; it starts at octet 12.
    let nameLength: Int

    /// The largest query with a key, in octets: a question with a 255-octet name and an OPT record
    /// with a few options.
    static let maximumQuery = 512

    /// The key of `query`; `nil` when it is not a plain query.
    init?(query: [UInt8], over transport: DNSTransport) {
        guard query.count >= 17, query.count <= Self.maximumQuery,
              query[2] & 0xF8 == 0,  // QR clear, OPCODE 0
              query[4] == 0, query[5] == 1, query[6] == 0, query[7] == 0, query[8] == 0, query[9] == 0,
              query[10] == 0, query[11] <= 1
        else { return nil }
        var end = 12
        while true {
            let length = Int(query[end])
            if length == 0 { break }
            // A compression pointer (0xC0) or a reserved label type (0x40, 0x80): ldns decides.
            guard length <= 63 else { return nil }
            end += 1 + length
            guard end < query.count else { return nil }
        }
        end += 1  // the root label
        guard end - 12 <= 255, end + 4 <= query.count else { return nil }
        var octets = Array(query[2...])
        // Label length octets are at most 63, below "A" (65): lower-casing the whole name leaves them.
        for index in 10..<(end - 2) where octets[index] >= 0x41 && octets[index] <= 0x5A { octets[index] |= 0x20 }
        self.octets = octets
        self.transport = transport
        nameLength = end - 12
    }

    static func == (lhs: AnswerKey, rhs: AnswerKey) -> Bool {
        lhs.transport == rhs.transport && lhs.octets == rhs.octets
    }

    /// The octets hashed as one buffer: an array's own hashing feeds the hasher one element at a time,
    /// a few percent of a cache hit's CPU time (perf).
    func hash(into hasher: inout Hasher) {
        hasher.combine(transport)
        octets.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}
