/// Where a message's TSIG records sit in its additional section, found before ldns reads it.
///
/// RFC 8945 §5.2: a TSIG that is not the last record of the additional section, or one of several, makes
/// the message FORMERR. ldns cannot say so: it keeps one TSIG apart from the section (a second one
/// replaces the first, which is never freed) and reads one record fewer after each. So this walk is
/// written by hand — over the record headers only (names, TYPE, RDLENGTH, RFC 1035 §4.1.2–§4.1.4), no
/// RDATA is read — and a message found misplaced is read by ldns only up to its first TSIG.
enum TSIGPlacement: Sendable, Hashable {
    /// No TSIG, or a walk that does not end inside the message (ldns then reports why).
    case none
    /// One TSIG, the last record.
    case last
    /// A TSIG before other additional records, or more than one: the index of the first one in the
    /// additional section.
    case misplaced(firstIndex: Int)

    /// TYPE TSIG (RFC 8945 §4.2).
    private static let tsigType: UInt16 = 250

    init(wire message: [UInt8]) {
        guard message.count >= 12 else {
            self = .none
            return
        }
        func u16(_ at: Int) -> Int { Int(message[at]) << 8 | Int(message[at + 1]) }
        let arcount = u16(10)
        var at = 12
        var first: Int?
        var count = 0
        let records = u16(6) + u16(8) + arcount
        guard arcount > 0 else {
            self = .none
            return
        }
        for _ in 0..<u16(4) {
            guard let end = WireName.end(in: message, at: at), end + 4 <= message.count else {
                self = .none
                return
            }
            at = end + 4
        }
        for index in 0..<records {
            guard let end = WireName.end(in: message, at: at), end + 10 <= message.count else {
                self = .none
                return
            }
            let additional = index - (records - arcount)
            if additional >= 0, u16(end) == Int(Self.tsigType) {
                first = first ?? additional
                count += 1
            }
            at = end + 10 + u16(end + 8)
            guard at <= message.count else {
                self = .none
                return
            }
        }
        guard let first else {
            self = .none
            return
        }
        self = count == 1 && first == arcount - 1 ? .last : .misplaced(firstIndex: first)
    }
}
