import CLDNS

/// The fields of a DNSKEY's RDATA (RFC 4034 §2.1) the validator checks before ldns's cryptography.
package struct DNSKEYData: Sendable, Hashable {
    package let flags: UInt16
    package let protocolField: UInt8
    package let algorithm: UInt8
    /// RFC 4034 Appendix B, computed by ldns (`ldns_calc_keytag_raw`) over the whole RDATA.
    package let keyTag: UInt16

    /// Bit 7 of the flags, ZONE (RFC 4034 §2.1.1): a key without it must not verify RRSIGs.
    package var isZoneKey: Bool { flags & 0x0100 != 0 }
    /// Bit 8 of the flags, REVOKE (RFC 5011 §3): a revoked key must not verify anything but its own
    /// revocation, which HostPin does not track.
    package var isRevoked: Bool { flags & 0x0080 != 0 }
    /// Bit 15, SEP (RFC 4034 §2.1.1): a hint only, never checked.
    package var isSecureEntryPoint: Bool { flags & 0x0001 != 0 }

    /// - Returns: `nil` when `rdata` holds no public key after the four fixed octets.
    package init?(_ rdata: [UInt8]) {
        guard rdata.count > 4 else { return nil }
        flags = UInt16(rdata[0]) << 8 | UInt16(rdata[1])
        protocolField = rdata[2]
        algorithm = rdata[3]
        keyTag = rdata.withUnsafeBufferPointer { ldns_calc_keytag_raw($0.baseAddress, $0.count) }
    }
}
