import HostPin

/// `compare`'s detector settings and probes: `--hijack-list FILE`, `--ordinary CIDR` (repeatable),
/// `--no-probe`, `--probe-https` and `--https-port PORT`, checked while the command line is parsed so a
/// bad value or list stops the command before anything is sent.
package struct HijackOptions: Sendable {
    /// The known hijack addresses and ordinary ranges.
    package let detector: HijackDetector
    /// Whether the wildcard probe runs (not `--no-probe`).
    package let probesWildcard: Bool
    /// The port of the HTTPS probe (`--probe-https`), or `nil` when it does not run.
    package let httpsPort: UInt16?

    /// The port `--probe-https` probes without `--https-port`.
    package static let defaultHTTPSPort: UInt16 = 443

    /// The options that configure the detector and the wildcard probe (those `hostpin serve` takes too).
    package static let detectorOptions = ["--hijack-list", "--ordinary", "--no-probe"]

    /// Takes the options from `parser`, reading the hijack list.
    ///
    /// - Parameter httpsProbe: Whether `--probe-https` and `--https-port` are taken; without, they are
    ///   left for ``OptionParser/finish()`` to report as unknown.
    /// - Throws: ``UsageError/invalidValue(option:reason:)`` for a bad range, port, or list line (every
    ///   bad line listed), ``UsageError/unreadableFile(option:path:reason:)`` for a list that cannot be
    ///   read, ``UsageError/conflict(_:)`` for `--https-port` without `--probe-https`.
    package init(parsing parser: inout OptionParser, httpsProbe: Bool = true) throws(UsageError) {
        probesWildcard = try !parser.flag("--no-probe")
        var probesHTTPS = false
        var port: UInt16?
        if httpsProbe {
            probesHTTPS = try parser.flag("--probe-https")
            port = try parser.values("--https-port") { text throws(UsageError) in
                guard let port = UInt16(port: text) else {
                    throw .invalidValue(option: "--https-port", reason: "'\(text)' is not a port number from 1 to 65535")
                }
                return port
            }.last
        }
        if port != nil, !probesHTTPS { throw .conflict("--https-port sets the port of the HTTPS probe: give --probe-https too") }
        httpsPort = probesHTTPS ? port ?? Self.defaultHTTPSPort : nil
        let ordinary = try parser.values("--ordinary") { text throws(UsageError) in
            do throws(IPAddressRange.ParseError) {
                return try IPAddressRange.parse(text)
            } catch {
                throw .invalidValue(option: "--ordinary", reason: error.description)
            }
        }
        let list = try parser.values("--hijack-list") { path throws(UsageError) in
            do throws(HijackListError) {
                return try HijackList(contentsOf: path)
            } catch {
                switch error {
                case .file(_, let problem):
                    throw .unreadableFile(option: "--hijack-list", path: path, reason: problem.description)
                case .invalid:
                    throw .invalidValue(option: "--hijack-list", reason: error.description)
                }
            }
        }.last
        detector = HijackDetector(ordinary: ordinary, knownHijackAddresses: list ?? HijackList())
    }

    /// The help lines for the detector's options.
    package static let detectorHelpLines = """
          --no-probe           Do not run the wildcard probe (by default, when the answers differ, a
                               random name under the same parent is asked of both sides).
          --hijack-list FILE   Addresses hijacking resolvers are known to hand out: one address or
                               CIDR range per line, then '#' and what it is (examples/hijack-list.txt).
          --ordinary CIDR      Count addresses in CIDR as ordinary, though RFC 6890 reserves them
                               (a lab on loopback, a company's private DNS); repeatable.
        """

    /// The help lines for these options.
    package static let helpLines = detectorHelpLines + """

          --probe-https        When the answers differ, open TLS to each side's addresses and verify
                               the certificate for NAME (with --ca-file's CAs besides the system's).
          --https-port PORT    The HTTPS probe's port (default \(defaultHTTPSPort)).
        """
}
