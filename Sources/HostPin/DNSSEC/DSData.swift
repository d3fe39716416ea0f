/// The fields of a DS record's RDATA (RFC 4034 §5.1).
package struct DSData: Sendable, Hashable {
    package let keyTag: UInt16
    package let algorithm: UInt8
    package let digestType: UInt8
    package let digest: [UInt8]

    /// - Returns: `nil` when `rdata` holds no digest after the four fixed octets.
    package init?(_ rdata: [UInt8]) {
        guard rdata.count > 4 else { return nil }
        keyTag = UInt16(rdata[0]) << 8 | UInt16(rdata[1])
        algorithm = rdata[2]
        digestType = rdata[3]
        digest = Array(rdata[4...])
    }
}
