import HostPin

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The IP addresses of this host's interfaces.
package enum HostAddresses {
    /// Every IPv4 and IPv6 address of every interface (`getifaddrs`), loopback included; empty when the
    /// kernel cannot list them.
    package static func all() -> [IPAddress] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return [] }
        defer { freeifaddrs(list) }
        var addresses: [IPAddress] = []
        var current = list
        while let entry = current {
            current = entry.pointee.ifa_next
            guard let raw = entry.pointee.ifa_addr else { continue }
            let length = switch Int32(raw.pointee.sa_family) {
            case AF_INET: MemoryLayout<sockaddr_in>.size
            case AF_INET6: MemoryLayout<sockaddr_in6>.size
            default: 0
            }
            guard length > 0 else { continue }
            var storage = sockaddr_storage()
            withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: UnsafeRawBufferPointer(start: raw, count: length)) }
            if let address = SocketAddress(storage: storage)?.address { addresses.append(address) }
        }
        return addresses
    }
}
