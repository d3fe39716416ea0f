/// One resource record as the validator sees it: owner, type, class, TTL and RDATA in wire form
/// (RFC 1035 §3.2.1), a value that crosses threads and tests freely; it becomes an `ldns_rr` only
/// inside ``SignatureCheck`` and the DS digest, where ldns does the cryptography.
package struct DNSSECRecord: Sendable, Hashable, CustomStringConvertible {
    package var owner: WireName
    package var type: UInt16
    package var dnsClass: UInt16
    /// Seconds (RFC 2181 §8).
    package var ttl: UInt32
    package var rdata: [UInt8]

    package init(owner: WireName, type: UInt16, dnsClass: UInt16 = 1, ttl: UInt32, rdata: [UInt8]) {
        self.owner = owner
        self.type = type
        self.dnsClass = dnsClass
        self.ttl = ttl
        self.rdata = rdata
    }

    /// RR types the validator reads (RFC 1035, 3596, 4034, 5155, 6672).
    package enum Kind {
        package static let a: UInt16 = 1
        package static let ns: UInt16 = 2
        package static let cname: UInt16 = 5
        package static let soa: UInt16 = 6
        package static let txt: UInt16 = 16
        package static let dname: UInt16 = 39
        package static let aaaa: UInt16 = 28
        package static let ds: UInt16 = 43
        package static let rrsig: UInt16 = 46
        package static let nsec: UInt16 = 47
        package static let dnskey: UInt16 = 48
        package static let nsec3: UInt16 = 50
    }

    /// The type an RRSIG covers (its first two RDATA octets, RFC 4034 §3.1); `nil` for other records
    /// or an RRSIG too short to hold it.
    package var typeCovered: UInt16? {
        guard type == Kind.rrsig, rdata.count >= 2 else { return nil }
        return UInt16(rdata[0]) << 8 | UInt16(rdata[1])
    }

    /// The record's uncompressed wire form, as ldns reads it back.
    package var wire: [UInt8] {
        var bytes = owner.wire
        for value in [type, dnsClass] { bytes += [UInt8(value >> 8), UInt8(value & 0xFF)] }
        bytes += [UInt8(ttl >> 24), UInt8(ttl >> 16 & 0xFF), UInt8(ttl >> 8 & 0xFF), UInt8(ttl & 0xFF)]
        bytes += [UInt8(rdata.count >> 8 & 0xFF), UInt8(rdata.count & 0xFF)]
        return bytes + rdata
    }

    package var description: String { "\(owner) \(ttl) \(RRset.typeName(type)) (\(rdata.count) octets)" }
}
