import HostPin

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A TCP endpoint: an IP address and a port, written `127.0.0.1:8118` or `[::1]:8118`.
///
/// Used for listening addresses (where port 0 asks the kernel for a free port), for the pinned origin
/// address a request went to, and for a client's address in an access log.
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible, LosslessStringConvertible {
    /// The IP address.
    public let address: IPAddress
    /// The TCP port, 0-65535 (0 only for a listening address: "any free port").
    public let port: UInt16

    /// Creates an endpoint from its parts.
    public init(address: IPAddress, port: UInt16) {
        self.address = address
        self.port = port
    }

    /// Parses `IP:PORT` or `[IPv6]:PORT` (the port is required); `nil` for anything else.
    public init?(_ description: String) {
        let hostPart: Substring
        let portPart: Substring
        if description.hasPrefix("[") {
            guard let close = description.firstIndex(of: "]") else { return nil }
            hostPart = description[description.index(after: description.startIndex)..<close]
            let rest = description[description.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portPart = rest.dropFirst()
        } else {
            guard let colon = description.lastIndex(of: ":") else { return nil }
            hostPart = description[..<colon]
            portPart = description[description.index(after: colon)...]
            if hostPart.contains(":") { return nil }  // IPv6 needs brackets when a port follows
        }
        guard let address = IPAddress(String(hostPart)), !portPart.isEmpty, portPart.count <= 5,
              portPart.allSatisfy({ $0.isASCII && $0.isNumber }), let port = UInt16(portPart)
        else { return nil }
        self.init(address: address, port: port)
    }

    /// `IP:PORT`, IPv6 in brackets (RFC 3986 §3.2.2).
    public var description: String { "\(address.uriHost):\(port)" }

    /// Calls `body` with this endpoint as a `sockaddr_in` or `sockaddr_in6`.
    package func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        switch address.family {
        case .v4:
            var storage = sockaddr_in()
            storage.sin_family = sa_family_t(AF_INET)
            storage.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &storage.sin_addr) { $0.copyBytes(from: address.bytes) }
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        case .v6:
            var storage = sockaddr_in6()
            storage.sin6_family = sa_family_t(AF_INET6)
            storage.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &storage.sin6_addr) { $0.copyBytes(from: address.bytes) }
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        }
    }

    /// Reads an endpoint from a `sockaddr_storage` filled by `accept`, `getsockname` or `getpeername`;
    /// `nil` for a family other than IPv4 and IPv6.
    package init?(storage: sockaddr_storage) {
        var storage = storage
        // The address's bytes as they are (network order), not through text: this runs for every
        // datagram the DNS stub receives.
        switch Int32(storage.ss_family) {
        case AF_INET:
            let sin = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in.self) }
            let address = withUnsafeBytes(of: sin.sin_addr) { IPAddress(family: .v4, raw: $0) }
            self.init(address: address, port: UInt16(bigEndian: sin.sin_port))
        case AF_INET6:
            let sin6 = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in6.self) }
            let address = withUnsafeBytes(of: sin6.sin6_addr) { IPAddress(family: .v6, raw: $0) }
            self.init(address: address, port: UInt16(bigEndian: sin6.sin6_port))
        default:
            return nil
        }
    }

    /// The local (`peer == false`) or remote endpoint of socket `descriptor`.
    package static func of(socket descriptor: Int32, peer: Bool) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                peer ? getpeername(descriptor, $0, &length) : getsockname(descriptor, $0, &length)
            }
        }
        return status == 0 ? SocketAddress(storage: storage) : nil
    }
}
