import Foundation

/// The SHA-256 digest of a server's public key (its DER SubjectPublicKeyInfo), written as libcurl's
/// `CURLOPT_PINNEDPUBLICKEY` takes it: `sha256//` and the digest in base64 (RFC 7858 §4.2 pins SPKI
/// digests the same way; RFC 7469 §2.4 defines the digest).
///
/// `openssl x509 -pubkey -noout -in cert.pem | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`
/// prints the base64 part for a certificate.
public struct PublicKeyPin: Sendable, Hashable, CustomStringConvertible, LosslessStringConvertible {
    /// `sha256//BASE64`.
    public let description: String

    /// Parses `sha256//BASE64`; `nil` unless the base64 decodes to 32 octets.
    public init?(_ description: String) {
        guard let parsed = try? Self.parse(description) else { return nil }
        self = parsed
    }

    private init(validated: String) {
        description = validated
    }

    /// Parses `sha256//BASE64`, where BASE64 (padded, RFC 4648 §4) decodes to a 32-octet digest.
    ///
    /// - Throws: ``EncryptedUpstreamError/badPin(_:)``.
    public static func parse(_ text: String) throws(EncryptedUpstreamError) -> PublicKeyPin {
        let prefix = "sha256//"
        guard text.hasPrefix(prefix), let digest = Data(base64Encoded: String(text.dropFirst(prefix.count))),
              digest.count == 32
        else { throw .badPin(text) }
        return PublicKeyPin(validated: text)
    }
}

/// The keys an encrypted upstream's NAME must present: `--pin NAME=sha256//BASE64[;sha256//BASE64...]`
/// (several pins allow a backup key, RFC 7858 §4.2).
public struct UpstreamPin: Sendable, Hashable, CustomStringConvertible {
    /// The upstream's NAME, normalised: a host name or an IP literal.
    public let name: HostName
    /// One pin or more, in order, without repeats.
    public let pins: [PublicKeyPin]

    /// Creates an entry from its parts.
    public init(name: HostName, pins: [PublicKeyPin]) {
        self.name = name
        self.pins = pins
    }

    /// Parses `NAME=sha256//BASE64`, several pins separated by `;` as libcurl takes them.
    ///
    /// - Throws: ``EncryptedUpstreamError/missingName(_:)``, ``EncryptedUpstreamError/badName(_:_:)``,
    ///   or ``EncryptedUpstreamError/badPin(_:)``.
    public static func parse(_ text: String) throws(EncryptedUpstreamError) -> UpstreamPin {
        let name = try EntryName.parse(text, allowsAddress: true)
        var pins: [PublicKeyPin] = []
        for item in text[text.index(after: name.equals)...].split(separator: ";", omittingEmptySubsequences: false) {
            let pin = try PublicKeyPin.parse(String(item))
            if !pins.contains(pin) { pins.append(pin) }
        }
        return UpstreamPin(name: name.name, pins: pins)
    }

    /// `NAME=sha256//…;sha256//…`.
    public var description: String { "\(name)=" + pins.map(\.description).joined(separator: ";") }
}
