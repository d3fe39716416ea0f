import HostPin
import HostPinNet

/// The proxy's own listening endpoint, compared by address, not by spelling: a target that would
/// connect back to it is refused, since the request would loop through the proxy.
struct ListeningEndpoint: Sendable {
    /// The address and port the listening socket is bound to.
    let bound: SocketAddress
    /// The host's interface addresses, asked for only when the proxy listens on the unspecified address.
    var hostAddresses: @Sendable () -> [IPAddress] = HostAddresses.all

    /// Whether a connection to `target` reaches the listening socket.
    ///
    /// An IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) is its IPv4 address; the unspecified address
    /// (`0.0.0.0`, `::`), to which Linux connects as to the loopback address, is `127.0.0.1` (`::1`); a
    /// proxy listening on `0.0.0.0` (`::`) is reached at every IPv4 (IPv6) address of the host, all of
    /// 127.0.0.0/8 included.
    func isReached(by target: SocketAddress) -> Bool {
        guard target.port == bound.port else { return false }
        let address = Self.connected(target.address)
        let listening = Self.unmapped(bound.address)
        guard Self.isUnspecified(listening) else { return address == listening }
        guard address.family == listening.family else { return false }
        if address.family == .v4, address.bytes[0] == 127 { return true }
        return hostAddresses().map(Self.unmapped).contains(address)
    }

    /// The address a connection to `address` actually goes to.
    private static func connected(_ address: IPAddress) -> IPAddress {
        let plain = unmapped(address)
        guard isUnspecified(plain) else { return plain }
        return plain.family == .v4 ? .loopbackV4 : .loopbackV6
    }

    /// `a.b.c.d` for `::ffff:a.b.c.d`; any other address as it is.
    private static func unmapped(_ address: IPAddress) -> IPAddress {
        let bytes = address.bytes
        guard address.family == .v6, bytes.prefix(12) == mappedPrefix[...],
              let v4 = IPAddress(bytes.suffix(4).map(String.init).joined(separator: "."))
        else { return address }
        return v4
    }

    private static func isUnspecified(_ address: IPAddress) -> Bool {
        address.bytes.allSatisfy { $0 == 0 }
    }

    private static let mappedPrefix: [UInt8] = Array(repeating: 0, count: 10) + [0xFF, 0xFF]
}
