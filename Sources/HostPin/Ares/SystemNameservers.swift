import CAres
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension UntrustedResolver {
    /// The system's configured DNS servers, in order, as c-ares reads them: the `nameserver` lines of
    /// `/etc/resolv.conf` (and c-ares's own fallback, `127.0.0.1:53`, when it lists none). The file is
    /// read, never written; nothing is sent.
    ///
    /// - Returns: Each server's address and port (53 unless c-ares was told another).
    /// - Throws: ``ResolutionError/setupFailed(_:)`` when c-ares cannot read the configuration.
    public static func systemNameservers() throws(ResolutionError) -> [Upstream] {
        AresLibrary.initialiseOnce()
        var channel: ares_channel?
        let status = ares_init(&channel)
        guard status == HOSTPIN_ARES_SUCCESS, let channel else {
            throw .setupFailed("the system's resolver configuration: \(AresStatus(code: status))")
        }
        defer { ares_destroy(channel) }
        var list: UnsafeMutablePointer<ares_addr_port_node>?
        let listed = ares_get_servers_ports(channel, &list)
        guard listed == HOSTPIN_ARES_SUCCESS else {
            throw .setupFailed("the system's resolver configuration: \(AresStatus(code: listed))")
        }
        defer { ares_free_data(list) }
        var servers: [Upstream] = []
        var node = list
        while let current = node?.pointee {
            var address: IPAddress?
            var copy = current.addr
            if current.family == AF_INET {
                address = withUnsafeBytes(of: &copy.addr4) { IPAddress(family: .v4, bytes: $0.prefix(4)) }
            } else if current.family == AF_INET6 {
                address = withUnsafeBytes(of: &copy.addr6) { IPAddress(family: .v6, bytes: $0.prefix(16)) }
            }
            if let address {
                let port = current.udp_port > 0 && current.udp_port <= 65535 ? UInt16(current.udp_port) : 53
                servers.append(Upstream(address: address, port: port))
            }
            node = current.next
        }
        return servers
    }
}
