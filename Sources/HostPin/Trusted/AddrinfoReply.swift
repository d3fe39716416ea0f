import CAres
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The records of one `ares_getaddrinfo` answer, copied out of c-ares's linked lists.
struct AddrinfoReply: Sendable, Hashable {
    /// A records first, then AAAA, each in answer order, each with its own TTL (c-ares `ai_ttl`, which is
    /// the record's own TTL and NOT capped by the CNAME chain: NOTES-cares.md).
    let addresses: [ResolvedAddress]
    /// The CNAME chain in order from the name asked for; each link once, though the A and AAAA answers
    /// both carry it.
    let cnames: [CNAMERecord]

    /// Copies what `info` holds; the caller frees it.
    init(_ info: UnsafePointer<ares_addrinfo>) {
        var v4: [ResolvedAddress] = []
        var v6: [ResolvedAddress] = []
        var node = info.pointee.nodes
        while let current = node?.pointee {
            let ttl = UInt32(clamping: current.ai_ttl)
            if let sockaddr = current.ai_addr {
                switch current.ai_family {
                case AF_INET:
                    let bytes = sockaddr.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                        withUnsafeBytes(of: address.pointee.sin_addr) { Array($0) }
                    }
                    v4.append(ResolvedAddress(address: IPAddress(family: .v4, bytes: bytes), ttl: ttl))
                case AF_INET6:
                    let bytes = sockaddr.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                        withUnsafeBytes(of: address.pointee.sin6_addr) { Array($0) }
                    }
                    v6.append(ResolvedAddress(address: IPAddress(family: .v6, bytes: bytes), ttl: ttl))
                default:
                    break
                }
            }
            node = current.ai_next
        }
        var cnames: [CNAMERecord] = []
        var cname = info.pointee.cnames
        while let current = cname?.pointee {
            if let alias = current.alias, let target = current.name {
                let record = CNAMERecord(alias: String(cString: alias).lowercased(),
                                         target: String(cString: target).lowercased(),
                                         ttl: UInt32(clamping: current.ttl))
                if !cnames.contains(record) { cnames.append(record) }
            }
            cname = current.next
        }
        self.addresses = v4 + v6
        self.cnames = cnames
    }
}
