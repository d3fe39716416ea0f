/// One rtnetlink message (rtnetlink(7), netlink(7)) read from a datagram of the kernel's: the header
/// fields HostPin reads and the bytes after the header. Netlink is Linux's own ABI, stable since 2.2;
/// the numbers below are `<linux/netlink.h>`'s and `<linux/rtnetlink.h>`'s, written out here because
/// Glibc's module does not carry those headers.
///
/// Hand-written where libmnl or libnl would parse: neither is among the system libraries HostPin links,
/// and the five fixed layouts read here (the header, `ifinfomsg`, `ifaddrmsg`, `rtmsg`, `rtattr`) are
/// a few dozen lines.
package struct NetlinkMessage: Sendable, Hashable {
    package var type: UInt16
    package var flags: UInt16
    package var sequence: UInt32
    /// The port the message was sent for: a dump's replies carry the asking socket's, a notification the
    /// port of whoever made the change (`ip`'s socket), or 0 for the kernel's own changes.
    package var port: UInt32
    /// The bytes after the 16-byte header (the family-specific header, then attributes).
    package var payload: [UInt8]

    package static let headerLength = 16

    // Message types (netlink.h, rtnetlink.h).
    package static let done: UInt16 = 3
    package static let error: UInt16 = 2
    package static let newLink: UInt16 = 16
    package static let deleteLink: UInt16 = 17
    package static let getLink: UInt16 = 18
    package static let newAddress: UInt16 = 20
    package static let deleteAddress: UInt16 = 21
    package static let getAddress: UInt16 = 22
    package static let newRoute: UInt16 = 24
    package static let deleteRoute: UInt16 = 25
    package static let getRoute: UInt16 = 26

    // Header flags.
    package static let request: UInt16 = 0x1
    package static let dump: UInt16 = 0x300

    package init(type: UInt16, flags: UInt16, sequence: UInt32, port: UInt32, payload: [UInt8]) {
        self.type = type
        self.flags = flags
        self.sequence = sequence
        self.port = port
        self.payload = payload
    }

    /// The messages of one datagram, in order. A message whose length field is too short or runs past
    /// the datagram ends the reading (the kernel never sends one; a truncated datagram is cut there).
    package static func messages(in datagram: some Collection<UInt8>) -> [NetlinkMessage] {
        let bytes = Array(datagram)
        var messages: [NetlinkMessage] = []
        var offset = 0
        while offset + headerLength <= bytes.count {
            let length = Int(bytes.uint32(at: offset))
            guard length >= headerLength, offset + length <= bytes.count else { break }
            messages.append(NetlinkMessage(type: bytes.uint16(at: offset + 4), flags: bytes.uint16(at: offset + 6),
                                           sequence: bytes.uint32(at: offset + 8), port: bytes.uint32(at: offset + 12),
                                           payload: Array(bytes[(offset + headerLength)..<(offset + length)])))
            offset += (length + 3) & ~3
        }
        return messages
    }

    /// The message's bytes, header included (host byte order, as netlink is): for requests and tests.
    package var bytes: [UInt8] {
        var out: [UInt8] = []
        out.appendUInt32(UInt32(Self.headerLength + payload.count))
        out.appendUInt16(type)
        out.appendUInt16(flags)
        out.appendUInt32(sequence)
        out.appendUInt32(port)
        out += payload
        while out.count % 4 != 0 { out.append(0) }
        return out
    }

    /// A dump request for every link, address or route (`type` is ``getLink``, ``getAddress`` or
    /// ``getRoute``), of every family: the family header is all zeros but for `AF_UNSPEC`.
    package static func dumpRequest(_ type: UInt16, sequence: UInt32) -> NetlinkMessage {
        // ifinfomsg is 16 bytes, ifaddrmsg 8, rtmsg 12: the kernel reads the family from the first byte.
        let length = type == getLink ? 16 : type == getAddress ? 8 : 12
        return NetlinkMessage(type: type, flags: request | dump, sequence: sequence, port: 0,
                              payload: [UInt8](repeating: 0, count: length))
    }

    /// The attributes (`rtattr`: length, type, value) from `offset` of the payload on, by type; a later
    /// one of the same type wins. Malformed lengths end the reading.
    package func attributes(from offset: Int) -> [UInt16: [UInt8]] {
        var attributes: [UInt16: [UInt8]] = [:]
        var position = offset
        while position + 4 <= payload.count {
            let length = Int(payload.uint16(at: position))
            guard length >= 4, position + length <= payload.count else { break }
            attributes[payload.uint16(at: position + 2) & 0x3FFF] = Array(payload[(position + 4)..<(position + length)])
            position += (length + 3) & ~3
        }
        return attributes
    }
}

extension [UInt8] {
    /// Native byte order (netlink's), little-endian on every platform HostPin builds for.
    func uint16(at offset: Int) -> UInt16 {
        UInt16(self[offset]) | UInt16(self[offset + 1]) << 8
    }

    func uint32(at offset: Int) -> UInt32 {
        UInt32(self[offset]) | UInt32(self[offset + 1]) << 8 | UInt32(self[offset + 2]) << 16 | UInt32(self[offset + 3]) << 24
    }

    mutating func appendUInt16(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }

    mutating func appendUInt32(_ value: UInt32) {
        appendUInt16(UInt16(truncatingIfNeeded: value))
        appendUInt16(UInt16(truncatingIfNeeded: value >> 16))
    }
}
