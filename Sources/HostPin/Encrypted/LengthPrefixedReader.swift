/// DNS messages on a stream: each preceded by its length in two octets, most significant first
/// (RFC 1035 §4.2.2, RFC 7766 §8, which DoT uses as is: RFC 7858 §3.3). A pure value: bytes in,
/// whole messages out, in order, however the stream was cut.
struct LengthPrefixedReader {
    private var buffer: [UInt8] = []
    /// Where the next message's length prefix starts in `buffer`; consumed bytes are dropped lazily.
    private var start = 0

    /// `message` with its length prefix. The length must fit in 16 bits (65 535 octets at most).
    static func frame(_ message: [UInt8]) -> [UInt8] {
        [UInt8(truncatingIfNeeded: message.count >> 8), UInt8(truncatingIfNeeded: message.count)] + message
    }

    /// Adds bytes read from the stream; returns the messages they complete, in order.
    mutating func append(_ bytes: some Collection<UInt8>) -> [[UInt8]] {
        buffer.append(contentsOf: bytes)
        var messages: [[UInt8]] = []
        while buffer.count - start >= 2 {
            let length = Int(buffer[start]) << 8 | Int(buffer[start + 1])
            guard buffer.count - start - 2 >= length else { break }
            messages.append(Array(buffer[(start + 2)..<(start + 2 + length)]))
            start += 2 + length
        }
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 65_537 {
            buffer.removeFirst(start)
            start = 0
        }
        return messages
    }

    /// Whether the stream stopped inside a message (or its length prefix).
    var holdsPartialMessage: Bool { start < buffer.count }
}
