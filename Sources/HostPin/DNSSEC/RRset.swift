/// The records of one owner, class and type (RFC 2181 §5) with the RRSIGs that cover them
/// (RFC 4034 §3): the unit a signature signs and the validator checks.
package struct RRset: Sendable, Hashable, CustomStringConvertible {
    package let owner: WireName
    package let type: UInt16
    package let dnsClass: UInt16
    package var records: [DNSSECRecord]
    package var signatures: [DNSSECRecord]

    package init(owner: WireName, type: UInt16, dnsClass: UInt16 = 1, records: [DNSSECRecord], signatures: [DNSSECRecord] = []) {
        self.owner = owner
        self.type = type
        self.dnsClass = dnsClass
        self.records = records
        self.signatures = signatures
    }

    /// Groups `records` (one section of a reply, or a zone) into RRsets in order of first appearance,
    /// each RRSIG joining the RRset of its owner, class and covered type. An RRSIG with nothing to cover
    /// stays an RRset of no records, so that a validator sees what was sent.
    package static func group(_ records: [DNSSECRecord]) -> [RRset] {
        struct Key: Hashable { let owner: WireName, type: UInt16, dnsClass: UInt16 }
        var order: [Key] = []
        var sets: [Key: RRset] = [:]
        // The RDATA each RRset holds, so a duplicate is dropped in constant time: a 64 KiB reply holds some
        // 6 000 records, which a scan of the RRset per record made quadratic.
        var seen: [Key: Set<[UInt8]>] = [:]
        for record in records {
            let type = record.typeCovered ?? record.type
            guard record.type != DNSSECRecord.Kind.rrsig || record.typeCovered != nil else { continue }
            let key = Key(owner: record.owner, type: type, dnsClass: record.dnsClass)
            if sets[key] == nil {
                order.append(key)
                sets[key] = RRset(owner: record.owner, type: type, dnsClass: record.dnsClass, records: [])
            }
            if record.type == DNSSECRecord.Kind.rrsig {
                sets[key]!.signatures.append(record)
            } else if seen[key, default: []].insert(record.rdata).inserted {
                sets[key]!.records.append(record)
            }
        }
        return order.map { sets[$0]! }
    }

    package var description: String { "\(owner) \(Self.typeName(type))" }

    /// A type's mnemonic for messages (RFC 3597 `TYPEnnn` for others).
    package static func typeName(_ type: UInt16) -> String {
        switch type {
        case DNSSECRecord.Kind.a: "A"
        case DNSSECRecord.Kind.ns: "NS"
        case DNSSECRecord.Kind.cname: "CNAME"
        case DNSSECRecord.Kind.soa: "SOA"
        case DNSSECRecord.Kind.txt: "TXT"
        case DNSSECRecord.Kind.aaaa: "AAAA"
        case DNSSECRecord.Kind.ds: "DS"
        case DNSSECRecord.Kind.rrsig: "RRSIG"
        case DNSSECRecord.Kind.nsec: "NSEC"
        case DNSSECRecord.Kind.dnskey: "DNSKEY"
        case DNSSECRecord.Kind.nsec3: "NSEC3"
        default: "TYPE\(type)"
        }
    }
}
