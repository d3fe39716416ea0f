import Foundation
import HostPin

/// The DNSSEC options every command that takes `--server` shares: `--dnssec validate|report|off`,
/// `--trust-anchor FILE` (repeatable; `HOSTPIN_TRUST_ANCHOR=FILE` when none is given) and
/// `--insecure-domain NAME` (repeatable), parsed into the trusted resolver's ``DNSSECConfiguration``
/// (README.md, "DNSSEC").
///
/// Every trust-anchor file is read while the command line is parsed, whatever the mode: one that cannot
/// be read or parsed, is empty, holds no DS or DNSKEY line or is a directory is a usage error (2) naming
/// the file (and the line), never validation silently off.
package struct DNSSECOptions: Sendable, Equatable {
    /// The mode without `--dnssec` (and without the configuration file's `resolution.dnssec`): the one
    /// place the default is set. `off` while validation is being wired through every path; it becomes
    /// `validate` once the lab and every test run with it (docs/ARCHITECTURE.md, "DNSSEC").
    package static let defaultMode: DNSSECMode = .off

    /// The environment variable read when no `--trust-anchor` is given.
    package static let environmentVariable = "HOSTPIN_TRUST_ANCHOR"

    /// What the trusted resolver validates with.
    package let configuration: DNSSECConfiguration

    /// The options at their defaults: ``defaultMode``, the built-in anchors, no insecure domain.
    package static let defaults = DNSSECOptions(configuration: DNSSECConfiguration(mode: defaultMode))

    private init(configuration: DNSSECConfiguration) {
        self.configuration = configuration
    }

    /// Takes `--dnssec`, `--trust-anchor` and `--insecure-domain` from `parser` (the configuration file's
    /// values standing in for those not given), then reads the trust anchors: every `--trust-anchor` file;
    /// without one, `environment[HOSTPIN_TRUST_ANCHOR]`; without it, the built-in root anchors.
    ///
    /// - Throws: ``UsageError/invalidValue(option:reason:)`` for a `--dnssec` other than validate, report
    ///   or off, an `--insecure-domain` that is no valid domain name, or a `--trust-anchor` file that
    ///   cannot be used (the ``TrustAnchorError`` sentence: the file, the line);
    ///   ``UsageError/invalidEnvironment(variable:reason:)`` for a `HOSTPIN_TRUST_ANCHOR` set but blank or
    ///   naming a file that cannot be used.
    package init(parsing parser: inout OptionParser,
                 environment: [String: String] = ProcessInfo.processInfo.environment) throws(UsageError) {
        let mode = try parser.values("--dnssec", Self.parseMode).last ?? Self.defaultMode
        let files = try parser.values("--trust-anchor") { $0 }
        let insecure = try parser.values("--insecure-domain", Self.parseInsecureDomain)
        try self.init(mode: mode, trustAnchorFiles: files, insecureDomains: insecure, environment: environment)
    }

    /// The options for `mode`, the anchors of `trustAnchorFiles` (else the environment's, else the
    /// built-in ones) and `insecureDomains` (repeats dropped, order kept).
    ///
    /// - Throws: As ``init(parsing:environment:)`` does for the anchors.
    package init(mode: DNSSECMode, trustAnchorFiles: [String], insecureDomains: [HostName],
                 environment: [String: String] = ProcessInfo.processInfo.environment) throws(UsageError) {
        let anchors: TrustAnchors
        if !trustAnchorFiles.isEmpty {
            do throws(TrustAnchorError) {
                anchors = try TrustAnchors.load(paths: trustAnchorFiles)
            } catch {
                throw .invalidValue(option: "--trust-anchor", reason: error.description)
            }
        } else if let file = environment[Self.environmentVariable] {
            // Set but blank names no file: falling back to the built-in anchors would validate against
            // keys the user meant to replace.
            guard !file.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw .invalidEnvironment(variable: Self.environmentVariable, reason: "it is set but names no file; "
                                          + "unset it for the built-in IANA root anchors, or name a trust-anchor file")
            }
            do throws(TrustAnchorError) {
                anchors = try TrustAnchors.load(path: file)
            } catch {
                throw .invalidEnvironment(variable: Self.environmentVariable, reason: error.description)
            }
        } else {
            anchors = .ianaRoot
        }
        var domains: [HostName] = []
        for domain in insecureDomains where !domains.contains(domain) { domains.append(domain) }
        configuration = DNSSECConfiguration(mode: mode, trustAnchors: anchors, insecureDomains: domains)
    }

    /// Parses `--dnssec`.
    package static func parseMode(_ text: String) throws(UsageError) -> DNSSECMode {
        guard let mode = DNSSECMode(rawValue: text) else {
            throw .invalidValue(option: "--dnssec", reason: "'\(text)' is not validate, report or off")
        }
        return mode
    }

    /// Parses `--insecure-domain`: a domain name (Unicode converted to A-labels, a trailing dot allowed),
    /// not an IP literal.
    package static func parseInsecureDomain(_ text: String) throws(UsageError) -> HostName {
        let name: HostName
        do throws(ResolutionError) {
            name = try HostName.parse(text)
        } catch {
            let reason = if case .badName(_, let problem) = error { "\(problem)" } else { error.description }
            throw .invalidValue(option: "--insecure-domain", reason: "'\(text)' is not a valid domain name: \(reason)")
        }
        guard name.literalAddress == nil else {
            throw .invalidValue(option: "--insecure-domain", reason: "'\(text)' is an IP address, not a domain name")
        }
        return name
    }

    /// The help lines for these options, the option column `width` wide (an option wider than that on a
    /// line of its own).
    package static func helpLines(width: Int) -> String {
        let entries: [(option: String, text: [String])] = [
            ("--dnssec validate|report|off", [
                "Check answers' DNSSEC signatures (RFC 4033-4035): validate (a bogus",
                "answer is never used: the next upstream is asked, else the name",
                "fails with the reason), report (validate and mark, but use a bogus",
                "answer) or off (default \(defaultMode.rawValue)).",
            ]),
            ("--trust-anchor FILE", [
                "Start chains of trust from the DS or DNSKEY lines of FILE (as Debian's",
                "dns-root-data writes them) instead of the built-in IANA root keys",
                "(key tags 20326, 38696); repeatable. Without one,",
                "\(environmentVariable)=FILE. A file that cannot be read or holds no",
                "DS/DNSKEY line is a usage error (2), never validation off.",
            ]),
            ("--insecure-domain NAME", [
                "Do not validate NAME and the names below it: their answers are",
                "insecure (a negative trust anchor, RFC 7646); repeatable.",
            ]),
        ]
        let indent = String(repeating: " ", count: width + 2)
        return entries.map { entry in
            let first = entry.option.count < width
                ? "  " + entry.option.padding(toLength: width, withPad: " ", startingAt: 0) + entry.text[0]
                : "  " + entry.option + "\n" + indent + entry.text[0]
            return ([first] + entry.text.dropFirst().map { indent + $0 }).joined(separator: "\n")
        }.joined(separator: "\n")
    }
}
