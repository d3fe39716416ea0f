import Foundation
import HostPinTestSupport

/// A test CA and a server certificate for `dns.example.test` (and 127.0.0.1, ::1) signed by it, made once per
/// test run with openssl in a temporary folder, plus the SHA-256 pins of the server's key and of
/// another key (the CA's).
struct EncryptedTestPKI: Sendable {
    let caFile: String
    let certificateFile: String
    let keyFile: String
    /// `sha256//…` of the server certificate's public key.
    let serverPin: String
    /// `sha256//…` of a key the server does not have.
    let otherPin: String

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The run's PKI, made at the first use.
    static var shared: EncryptedTestPKI {
        get async throws { try await made.value }
    }

    private static let made = Task { try await make() }

    private static func make() async throws -> EncryptedTestPKI {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-pki-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let script = """
            set -e
            cd "$1"
            cat >ext.cnf <<'CNF'
            [req]
            distinguished_name = dn
            prompt = no
            [dn]
            [ca]
            basicConstraints = critical, CA:TRUE, pathlen:0
            keyUsage = critical, keyCertSign, cRLSign
            subjectKeyIdentifier = hash
            [leaf]
            basicConstraints = critical, CA:FALSE
            keyUsage = critical, digitalSignature
            extendedKeyUsage = serverAuth
            subjectKeyIdentifier = hash
            authorityKeyIdentifier = keyid, issuer
            subjectAltName = DNS:dns.example.test, IP:127.0.0.1, IP:::1
            CNF
            openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.crt \
                -days 2 -subj "/CN=HostPin encrypted-transport test CA" -config ext.cnf -extensions ca 2>/dev/null
            openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout dns.key -out dns.csr \
                -subj "/CN=dns.example.test" -config ext.cnf 2>/dev/null
            openssl x509 -req -in dns.csr -CA ca.crt -CAkey ca.key -set_serial 2 -days 2 -extfile ext.cnf \
                -extensions leaf -out dns.crt 2>/dev/null
            pin() { openssl x509 -pubkey -noout -in "$1" | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64; }
            echo "$(pin dns.crt) $(pin ca.crt)"
            """
        let result = try await ProcessRunner.run("/bin/bash", ["-c", script, "pki", directory.path])
        let pins = result.standardOutput.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        guard result.status == 0, pins.count == 2 else {
            throw Failure(description: "openssl could not make the test PKI: \(result.standardError)")
        }
        return EncryptedTestPKI(caFile: directory.appendingPathComponent("ca.crt").path,
                                certificateFile: directory.appendingPathComponent("dns.crt").path,
                                keyFile: directory.appendingPathComponent("dns.key").path,
                                serverPin: "sha256//" + pins[0], otherPin: "sha256//" + pins[1])
    }
}
