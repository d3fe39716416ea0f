/// Stepping over a domain name in a message by hand (RFC 1035 §4.1.4), for the two walks ldns offers no
/// call for: the TTL offsets of a ``ReplyTemplate`` and the ``TSIGPlacement``. Only lengths are read;
/// names themselves are ldns's to read.
enum WireName {
    /// The offset just past the name at `offset` in `message`: its labels up to the root label or a
    /// compression pointer (which ends a name); `nil` when it runs past the end or holds a label type
    /// other than a length of at most 63 or a pointer.
    static func end(in message: [UInt8], at offset: Int) -> Int? {
        var at = offset
        while at < message.count {
            let length = Int(message[at])
            if length == 0 { return at + 1 }
            if length & 0xC0 == 0xC0 { return at + 2 <= message.count ? at + 2 : nil }
            guard length <= 63 else { return nil }
            at += 1 + length
        }
        return nil
    }
}
