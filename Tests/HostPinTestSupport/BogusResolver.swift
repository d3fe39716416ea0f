import HostPin

/// A resolver whose every answer failed DNSSEC validation on every upstream (what a validating
/// ``TrustedResolver`` throws for a forged answer): for the interceptor's and the proxy's tests of how a
/// bogus name reaches their users, without a signed zone.
public struct BogusResolver: HostResolver {
    /// The reason every resolution fails with.
    public static let reason = BogusReason(rrset: "modified.example.test. A", keyTag: 4242,
                                           problem: .signatureInvalid("the RRSIG does not match the RRset"))

    public init() {}

    public func resolve(_ name: HostName, family: AddressFamily) async throws(ResolutionError) -> Resolution {
        throw .dnssecBogus(Self.reason, [])
    }
}
