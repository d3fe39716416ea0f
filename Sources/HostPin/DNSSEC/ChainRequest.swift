/// An RRset the validator needs to build a chain of trust, asked of the same upstream (with DO and CD
/// set) by whoever drives ``AnswerValidation``.
package enum ChainRequest: Sendable, Hashable, CustomStringConvertible {
    /// The DNSKEY RRset at the apex of `zone`.
    case dnskey(WireName)
    /// The DS RRset for `zone`, answered by its parent.
    case ds(WireName)

    package var description: String {
        switch self {
        case .dnskey(let zone): "\(zone) DNSKEY"
        case .ds(let zone): "\(zone) DS"
        }
    }
}
