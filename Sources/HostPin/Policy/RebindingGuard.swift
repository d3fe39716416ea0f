/// The DNS-rebinding guard the proxy and the interceptor share: a name that resolves into a
/// special-purpose block (RFC 6890: private, loopback, link-local, …; see
/// ``IPAddress/specialPurposeBlock``) must not lead a request there, or a page under an attacker's name
/// could reach the local host or network through HostPin.
///
/// The callers decide when it applies: the proxy guards every resolved target unless its operator allows
/// private targets; the interceptor guards names it resolves when asked to. Neither guards the addresses
/// a `pin` rule gives: those are the operator's, not an answer from DNS.
public enum RebindingGuard {
    /// The addresses of `addresses` outside every special-purpose block, in order: a name with both
    /// kinds goes to its ordinary addresses only.
    ///
    /// - Parameters:
    ///   - addresses: The addresses `name` resolved to, in answer order.
    ///   - name: The name asked for, for the refusal.
    /// - Returns: The admitted addresses; not empty when `addresses` is not.
    /// - Throws: ``RebindingRefusal`` naming the first address refused and its block when every address
    ///   is special-purpose.
    public static func admitted(_ addresses: [IPAddress], for name: HostName) throws(RebindingRefusal) -> [IPAddress] {
        var admitted: [IPAddress] = []
        var refused: RebindingRefusal?
        for address in addresses {
            if let block = address.specialPurposeBlock {
                refused = refused ?? RebindingRefusal(name: name, address: address, block: block)
            } else {
                admitted.append(address)
            }
        }
        if admitted.isEmpty, let refused { throw refused }
        return admitted
    }
}

/// A target refused by ``RebindingGuard``: every address of `name` is special-purpose.
public struct RebindingRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// The name that resolved there.
    public let name: HostName
    /// The first address refused.
    public let address: IPAddress
    /// Its block.
    public let block: IPAddress.SpecialPurposeBlock

    /// `www.example.test resolves to 127.0.0.10, in special-purpose block 127.0.0.0/8 (loopback, RFC
    /// 1122); private targets are not allowed.`
    public var description: String {
        "\(name) resolves to \(address), in special-purpose block \(block); private targets are not allowed."
    }
}
