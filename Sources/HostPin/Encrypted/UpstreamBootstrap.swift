/// Where an encrypted upstream's NAME is: `--bootstrap NAME=IP[,IP...]`.
///
/// HostPin never asks the system resolver (which the hijacker may answer) where its trusted upstream
/// is; the addresses come from the configuration instead.
public struct UpstreamBootstrap: Sendable, Hashable, CustomStringConvertible {
    /// The upstream's host name, normalised.
    public let name: HostName
    /// Its addresses, in the order given, without repeats; at least one.
    public let addresses: [IPAddress]

    /// Parses `NAME=IP[,IP...]`; IPv6 addresses with or without brackets.
    ///
    /// - Throws: ``EncryptedUpstreamError/missingName(_:)``, ``EncryptedUpstreamError/badName(_:_:)``,
    ///   ``EncryptedUpstreamError/addressAsName(_:)`` or ``EncryptedUpstreamError/badBootstrapAddress(_:_:)``.
    public static func parse(_ text: String) throws(EncryptedUpstreamError) -> UpstreamBootstrap {
        let name = try EntryName.parse(text, allowsAddress: false)
        var addresses: [IPAddress] = []
        for item in text[text.index(after: name.equals)...].split(separator: ",", omittingEmptySubsequences: false) {
            let bare = item.hasPrefix("[") && item.hasSuffix("]") ? item.dropFirst().dropLast() : item
            guard let address = IPAddress(String(bare)) else { throw .badBootstrapAddress(text, String(item)) }
            if !addresses.contains(address) { addresses.append(address) }
        }
        return UpstreamBootstrap(name: name.name, addresses: addresses)
    }

    /// Creates an entry from its parts.
    public init(name: HostName, addresses: [IPAddress]) {
        self.name = name
        self.addresses = addresses
    }

    /// `NAME=IP,IP`, IPv6 without brackets.
    public var description: String { "\(name)=" + addresses.map(\.description).joined(separator: ",") }
}

/// The `NAME=` part of a `--bootstrap` or `--pin` entry.
struct EntryName {
    let name: HostName
    let equals: String.Index

    /// - Parameter allowsAddress: Whether NAME may be an IP literal (a pin for `tls://127.0.0.1` makes
    ///   sense; a bootstrap for an address does not).
    static func parse(_ text: String, allowsAddress: Bool) throws(EncryptedUpstreamError) -> EntryName {
        guard let equals = text.firstIndex(of: "="), equals != text.startIndex else { throw .missingName(text) }
        let name: HostName
        do {
            name = try HostName.parse(String(text[..<equals]))
        } catch {
            guard case .badName(_, let problem) = error else { throw .missingName(text) }
            throw .badName(text, problem)
        }
        guard allowsAddress || name.literalAddress == nil else { throw .addressAsName(text) }
        return EntryName(name: name, equals: equals)
    }
}
