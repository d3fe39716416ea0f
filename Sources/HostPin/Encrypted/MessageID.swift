/// The one field of a DNS message the transports read or write: the 16-bit ID in its first two octets
/// (RFC 1035 §4.1.1). Everything else in a message is the caller's to build and to read.
///
/// DoT needs it because one connection carries many queries at once and replies may come in any
/// order: they are matched to queries by ID (RFC 7766 §6.2.1.1), so each query in flight on a
/// connection must have an ID of its own there.
enum MessageID {
    /// The ID of `message`, which has at least 2 octets.
    static func read(_ message: [UInt8]) -> UInt16 {
        UInt16(message[0]) << 8 | UInt16(message[1])
    }

    /// Sets the ID of `message`, which has at least 2 octets.
    static func write(_ id: UInt16, into message: inout [UInt8]) {
        message[0] = UInt8(truncatingIfNeeded: id >> 8)
        message[1] = UInt8(truncatingIfNeeded: id)
    }
}
