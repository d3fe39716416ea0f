/// One entry of the shared cache as stored in Redis: the answer in DNS wire format (``SharedCacheAnswer``),
/// its absolute expiry, the time it was received, its DNSSEC status and the writer's policy, followed by
/// an HMAC-SHA-256 under the fleet's secret over the key and all of that.
///
/// Layout (integers big-endian): `HPC1`, expiry (8 bytes, Unix seconds), received (8 bytes, Unix
/// milliseconds), DNSSEC status (1 byte: 0 not validated, 1 secure, 2 insecure, 3 indeterminate; bogus is
/// never stored), policy length (2 bytes) and ``SharedCachePolicy/encoded``, wire length (4 bytes) and the
/// message, then the 32-byte tag. The tag covers the key, so a value copied under another name's key
/// fails it; and the policy, so a value written under another DNSSEC mode or route is refused.
public struct SharedCacheValue: Sendable, Hashable {
    /// Why a stored value is not used; every case is a miss.
    public enum Rejection: Error, Sendable, Hashable {
        /// Not in this layout, or cut short.
        case malformed
        /// The tag does not match: written without the secret, changed, or copied from another key.
        case badTag
        /// Written under another policy (DNSSEC mode or route).
        case otherPolicy
        /// Its expiry has passed (Redis drops it soon itself).
        case expired
        /// Not validated, or bogus, where the reader validates.
        case unvalidated
    }

    /// The answer's DNS message (``SharedCacheAnswer/wire(of:family:)``).
    public let wire: [UInt8]
    /// Unix seconds after which the answer may not be used.
    public let expiresAt: UInt64
    /// Unix milliseconds at which the writer received the answer from its upstream.
    public let receivedAt: UInt64
    /// What validation found; `nil` when the writer did not validate.
    public let dnssec: DNSSECStatus?
    /// The writer's ``SharedCachePolicy/encoded`` bytes.
    let policy: [UInt8]

    private static let magic = Array("HPC1".utf8)

    public init(wire: [UInt8], expiresAt: UInt64, receivedAt: UInt64, dnssec: DNSSECStatus?, policy: SharedCachePolicy) {
        self.wire = wire
        self.expiresAt = expiresAt
        self.receivedAt = receivedAt
        self.dnssec = dnssec
        self.policy = policy.encoded
    }

    /// The stored bytes for `key`, tagged under `secret`; `nil` for a bogus answer, which is never stored.
    public func sealed(key: SharedCacheKey, secret: SharedCacheSecret) -> [UInt8]? {
        let status: UInt8
        switch dnssec {
        case nil: status = 0
        case .secure: status = 1
        case .insecure: status = 2
        case .indeterminate: status = 3
        case .bogus: return nil
        }
        var bytes = Self.magic
        bytes.reserveCapacity(4 + 17 + 2 + policy.count + 4 + wire.count + HMACSHA256.tagLength)
        Self.append(expiresAt, bytes: 8, to: &bytes)
        Self.append(receivedAt, bytes: 8, to: &bytes)
        bytes.append(status)
        Self.append(UInt64(policy.count), bytes: 2, to: &bytes)
        bytes += policy
        Self.append(UInt64(wire.count), bytes: 4, to: &bytes)
        bytes += wire
        bytes += Self.tag(bytes, key: key, secret: secret)
        return bytes
    }

    /// Reads `bytes`, stored under `key`, as a reader with `policy` at Unix time `now` (seconds): the tag
    /// is checked first (in constant time), then the layout, the policy, the expiry and, for a reader
    /// that validates, the DNSSEC status (secure, insecure or indeterminate).
    ///
    /// - Throws: the ``Rejection`` that makes the value a miss.
    public static func open(_ bytes: [UInt8], key: SharedCacheKey, secret: SharedCacheSecret,
                            policy: SharedCachePolicy, now: UInt64) throws(Rejection) -> SharedCacheValue {
        guard bytes.count >= magic.count + 17 + 2 + 4 + HMACSHA256.tagLength else { throw .malformed }
        let body = Array(bytes[..<(bytes.count - HMACSHA256.tagLength)])
        guard HMACSHA256.equal(tag(body, key: key, secret: secret), bytes[body.count...]) else { throw .badTag }
        // Authentic from here: a writer with the secret made it, so a bad layout is a bug of a writer
        // (another version), still only a miss.
        guard body.starts(with: magic) else { throw .malformed }
        var reader = Reader(bytes: body, at: magic.count)
        guard let expiresAt = reader.integer(8), let receivedAt = reader.integer(8), let status = reader.integer(1),
              let policyLength = reader.integer(2), let storedPolicy = reader.bytes(Int(policyLength)),
              let wireLength = reader.integer(4), let wire = reader.bytes(Int(wireLength)), reader.atEnd
        else { throw .malformed }
        guard HMACSHA256.equal(storedPolicy, policy.encoded) else { throw .otherPolicy }
        guard expiresAt > now else { throw .expired }
        let dnssec: DNSSECStatus?
        switch status {
        case 0: dnssec = nil
        case 1: dnssec = .secure
        case 2: dnssec = .insecure
        case 3: dnssec = .indeterminate
        default: throw .malformed
        }
        if policy.dnssec == .validate, dnssec == nil { throw .unvalidated }
        return SharedCacheValue(wire: wire, expiresAt: expiresAt, receivedAt: receivedAt, dnssec: dnssec,
                                policyBytes: storedPolicy)
    }

    private init(wire: [UInt8], expiresAt: UInt64, receivedAt: UInt64, dnssec: DNSSECStatus?, policyBytes: [UInt8]) {
        self.wire = wire
        self.expiresAt = expiresAt
        self.receivedAt = receivedAt
        self.dnssec = dnssec
        self.policy = policyBytes
    }

    /// The tag of `body` stored under `key`: HMAC-SHA-256 under the secret of the key's text, a NUL, and `body`.
    private static func tag(_ body: [UInt8], key: SharedCacheKey, secret: SharedCacheSecret) -> [UInt8] {
        HMACSHA256.tag(Array(key.text.utf8) + [0] + body, key: secret.bytes)
    }

    private static func append(_ value: UInt64, bytes count: Int, to bytes: inout [UInt8]) {
        for shift in stride(from: (count - 1) * 8, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    /// Reads big-endian integers and byte runs off the front of a value, never past its end.
    private struct Reader {
        let bytes: [UInt8]
        var at: Int

        var atEnd: Bool { at == bytes.count }

        mutating func integer(_ count: Int) -> UInt64? {
            guard bytes.count - at >= count else { return nil }
            var value: UInt64 = 0
            for byte in bytes[at..<(at + count)] { value = value << 8 | UInt64(byte) }
            at += count
            return value
        }

        mutating func bytes(_ count: Int) -> [UInt8]? {
            guard count >= 0, bytes.count - at >= count else { return nil }
            defer { at += count }
            return Array(bytes[at..<(at + count)])
        }
    }
}
