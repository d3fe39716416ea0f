/// How the trusted resolver validates answers: the mode, the trust anchors chains start from, and the
/// domains treated as insecure whatever their signatures say (negative trust anchors, RFC 7646).
public struct DNSSECConfiguration: Sendable, Hashable {
    /// Validate, report or off. Default: ``DNSSECMode/validate``.
    public var mode: DNSSECMode
    /// The keys chains of trust start from. Default: the IANA root's key-signing keys
    /// (``TrustAnchors/ianaRoot``).
    public var trustAnchors: TrustAnchors
    /// Names at and below which answers are not validated and count as insecure (RFC 7646): zones known to
    /// be broken, or internal names that a public anchor cannot cover.
    public var insecureDomains: [HostName]

    public init(mode: DNSSECMode = .validate, trustAnchors: TrustAnchors = .ianaRoot, insecureDomains: [HostName] = []) {
        self.mode = mode
        self.trustAnchors = trustAnchors
        self.insecureDomains = insecureDomains
    }

    /// No validation (``DNSSECMode/off``).
    public static let off = DNSSECConfiguration(mode: .off)
}
