/// A name a ``LocalResolverWatch`` found hijacked for the first time: what each side answered and the
/// ``HijackReason``s.
public struct HijackReport: Sendable, Hashable, CustomStringConvertible {
    /// The name compared.
    public let name: HostName
    /// The family compared.
    public let family: AddressFamily
    /// What the trusted side said.
    public let trusted: TrustedAnswer
    /// The local resolver's addresses.
    public let local: [IPAddress]
    /// Why the verdict is hijacked; at least one reason.
    public let reasons: [HijackReason]

    public init(name: HostName, family: AddressFamily, trusted: TrustedAnswer, local: [IPAddress], reasons: [HijackReason]) {
        self.name = name
        self.family = family
        self.trusted = trusted
        self.local = local
        self.reasons = reasons
    }

    /// One line: `www.example.test (A): local 127.0.0.66, trusted 127.0.0.10: wildcard: …; special-range: …`.
    public var description: String {
        let type = switch family {
        case .v4: "A"
        case .v6: "AAAA"
        case .any: "A and AAAA"
        }
        let truth = switch trusted {
        case .addresses(let resolution): resolution.ipAddresses.map(\.description).joined(separator: ", ")
        case .nxdomain: "NXDOMAIN"
        case .nodata: "NODATA"
        }
        return "\(name) (\(type)): local \(local.map(\.description).joined(separator: ", ")), trusted \(truth): "
            + reasons.map(\.description).joined(separator: "; ")
    }
}
