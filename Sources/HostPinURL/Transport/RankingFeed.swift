import HostPin

/// Where one transfer reports what its connection showed (``AddressRanking``): the time a new
/// connection took to be usable — for HTTPS until the TLS handshake verified the name's certificate —
/// or the address whose certificate failed the check, excluded for the name from then on.
struct RankingFeed: Sendable {
    let ranking: SharedAddressRanking
    /// The normalised host name (``PinnedRequest/rankingName``).
    let name: String
    /// The port the transfer connects to.
    let port: UInt16
}
