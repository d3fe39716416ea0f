/// DNS over TCP's framing (RFC 1035 §4.2.2, RFC 7766 §8): each message preceded by its length in two
/// octets, network order. A pure buffer: bytes in as they arrive, whole messages out.
struct TCPFrames: Sendable {
    private var buffer: [UInt8] = []
    /// Where the unconsumed bytes of `buffer` begin (consumed bytes are dropped in bulk, not per message).
    private var start = 0

    /// The bytes received and not yet taken as a message; at most one partial message and its prefix
    /// once ``next()`` has taken every whole one.
    var pending: Int { buffer.count - start }

    mutating func append(_ bytes: [UInt8]) {
        if start > 0, start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer += bytes
    }

    /// The next whole message, without its prefix; `nil` until all of it has arrived.
    mutating func next() -> [UInt8]? {
        guard pending >= 2 else { return nil }
        let length = Int(buffer[start]) << 8 | Int(buffer[start + 1])
        guard pending >= 2 + length else { return nil }
        let message = Array(buffer[(start + 2)..<(start + 2 + length)])
        start += 2 + length
        return message
    }

    /// `message` with its length prefix; `message` holds at most 65 535 octets.
    static func frame(_ message: [UInt8]) -> [UInt8] {
        [UInt8(truncatingIfNeeded: message.count >> 8), UInt8(truncatingIfNeeded: message.count)] + message
    }
}
