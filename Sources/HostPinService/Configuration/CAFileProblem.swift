import Foundation

/// Why a `--ca-file` cannot be used although it opens: a regular file without a PEM certificate, which
/// libcurl rejects (CURLE_SSL_CACERT_BADFILE, curl's exit 77) only when the first TLS connection is
/// made, where HostPin would report it as a failing upstream or an untrusted certificate. Checked while
/// the command line is parsed, for every command. Other kinds of file (a FIFO such as `<(cat ca.pem)`,
/// a device) are left to libcurl, which must read them itself.
package struct CAFileProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file as named on the command line.
    package let path: String
    /// Why it cannot be used.
    package let reason: String

    /// The PEM marker every certificate in a CA file begins with.
    package static let certificateMarker = Data("-----BEGIN CERTIFICATE-----".utf8)

    /// The problem with `path`, or `nil` when it holds a PEM certificate or is not a regular file.
    package init?(checking path: String) {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        let contents: Data
        do {
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            contents = try handle.readToEnd() ?? Data()
        } catch {
            self.init(path: path, reason: "it cannot be read: \(FileAccess.reason(error))")
            return
        }
        guard contents.range(of: Self.certificateMarker) == nil else { return nil }
        self.init(path: path, reason: "it holds no PEM certificate (no -----BEGIN CERTIFICATE----- line)")
    }

    package init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    /// The sentence, without a final period: `problem with the CA certificate file FILE: REASON`.
    package var description: String { "problem with the CA certificate file \(path): \(reason)" }
}
