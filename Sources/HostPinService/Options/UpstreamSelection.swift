import Foundation
import HostPin

/// The trusted upstreams a command queries, chosen by precedence (flags win over the environment): every
/// `--server` flag; else `HOSTPIN_UPSTREAMS=UPSTREAM,UPSTREAM`; else a documented set of well-known
/// public resolvers, reached over DNS over HTTPS. Encrypted upstreams get their `--bootstrap` addresses,
/// `--pin`s and `--ca-file` here.
package struct UpstreamSelection: Sendable, Equatable {
    /// Where the list came from.
    package enum Origin: Sendable, Equatable {
        case flags
        case environment
        case defaults
    }

    /// The environment variable read when no `--server` is given.
    package static let environmentVariable = "HOSTPIN_UPSTREAMS"

    /// The public resolvers used when neither flags nor the environment name any: Cloudflare, Google and
    /// Quad9 over DNS over HTTPS, each with the addresses its operator documents as bootstrap (IPv4
    /// first), so no plain DNS query is sent, not even to find them. Listed in every subcommand's help.
    package static let publicDefaults: [Upstream] = [
        ("https://cloudflare-dns.com/dns-query", "1.1.1.1", "1.0.0.1", "2606:4700:4700::1111", "2606:4700:4700::1001"),
        ("https://dns.google/dns-query", "8.8.8.8", "8.8.4.4", "2001:4860:4860::8888", "2001:4860:4860::8844"),
        ("https://dns.quad9.net/dns-query", "9.9.9.9", "149.112.112.112", "2620:fe::fe", "2620:fe::9"),
    ].compactMap { url, v4, v4b, v6, v6b in
        guard var upstream = EncryptedUpstream(url) else { return nil }
        upstream.bootstrap = [v4, v4b, v6, v6b].compactMap(IPAddress.init)
        return Upstream(upstream)
    }

    /// The upstreams, in the order they are tried; never empty. An encrypted upstream named by a host
    /// name without any bootstrap address is left so only when the list has plain upstreams to look the
    /// name up through (``TrustedOptions/makeResolver(_:)``).
    package let upstreams: [Upstream]
    /// Which source supplied them.
    package let origin: Origin

    /// Chooses between `flags` (the `--server` values), `environment[HOSTPIN_UPSTREAMS]` and the defaults,
    /// then gives each encrypted upstream the `bootstrap` addresses and `pins` for its NAME and the extra
    /// CA file.
    ///
    /// A variable set but empty or blank is an error, not "unset": it names no upstream, and falling
    /// back to the public defaults would contact them when the user meant to name their own.
    ///
    /// - Throws: ``UsageError/emptyEnvironment(variable:)`` when the variable is consulted and empty or
    ///   blank; ``UsageError/invalidEnvironment(variable:reason:)`` when it holds something that is not a
    ///   list of upstreams; ``UsageError/unusedUpstreamName(option:name:upstreamNames:)`` when a
    ///   `--bootstrap` or `--pin` names no upstream's NAME (a typo would silently turn pinning off);
    ///   ``UsageError/unbootstrapped(upstream:name:)`` when an encrypted upstream's NAME has no bootstrap
    ///   address and no plain upstream is listed.
    package init(flags: [Upstream], bootstrap: [UpstreamBootstrap] = [], pins: [UpstreamPin] = [], extraCAFile: String? = nil,
         routeUpstreams: [Upstream] = [], environment: [String: String] = ProcessInfo.processInfo.environment) throws(UsageError)
    {
        let chosen: [Upstream]
        let variable = environment[Self.environmentVariable]
        let text = variable?.trimmingCharacters(in: .whitespaces) ?? ""
        if !flags.isEmpty {
            chosen = flags
            origin = .flags
        } else if variable == nil {
            chosen = Self.publicDefaults
            origin = .defaults
        } else if text.isEmpty {
            throw .emptyEnvironment(variable: Self.environmentVariable)
        } else {
            var parsed: [Upstream] = []
            for entry in text.split(separator: ",", omittingEmptySubsequences: false) {
                do throws(Upstream.ParseError) {
                    parsed.append(try Upstream.parse(entry.trimmingCharacters(in: .whitespaces)))
                } catch {
                    throw .invalidEnvironment(variable: Self.environmentVariable, reason: error.description)
                }
            }
            chosen = parsed
            origin = .environment
        }
        // A --bootstrap or --pin may be for a route's encrypted upstream (--route) as well.
        let names = (chosen + routeUpstreams).compactMap(\.encrypted).map(\.name)
        let unused = bootstrap.map { ("--bootstrap", $0.name) } + pins.map { ("--pin", $0.name) }
        if let (option, name) = unused.first(where: { !names.contains($0.1) }) {
            var seen: Set<String> = []
            throw .unusedUpstreamName(option: option, name: name.text,
                                      upstreamNames: names.map(\.text).filter { seen.insert($0).inserted })
        }
        let hasPlain = chosen.contains(where: \.isPlain)
        var upstreams: [Upstream] = []
        for upstream in chosen {
            do throws(EncryptedUpstreamError) {
                upstreams.append(try upstream.configured(bootstrap: bootstrap, pins: pins, extraCAFile: extraCAFile))
            } catch {
                // Only an encrypted upstream whose NAME has no address gets here: with plain upstreams in
                // the list, its NAME is looked up through them at start; without, nothing may look it up.
                guard hasPlain, let encrypted = upstream.encrypted else {
                    throw .unbootstrapped(upstream: upstream.description, name: upstream.encrypted?.name.text ?? "")
                }
                upstreams.append(Upstream(encrypted.adding(bootstrap: bootstrap, pins: pins, extraCAFile: extraCAFile)))
            }
        }
        self.upstreams = upstreams
    }

    /// The help section describing the precedence and the default set.
    package static var helpSection: String {
        """
        UPSTREAMS:
          Trusted upstreams come from every --server flag; without one, from
          \(environmentVariable)=UPSTREAM,UPSTREAM (set but empty or blank is a usage error: unset it for
          the defaults); with neither, from the public DNS over HTTPS
          resolvers \(publicDefaults.map(\.description).joined(separator: ", "))
          (tried in that order, reached at their documented addresses:
          \(publicDefaults.compactMap(\.encrypted).map { "\($0.name)=\($0.bootstrap.map(\.description).joined(separator: ","))" }.joined(separator: "\n  ")))
          An UPSTREAM is IP[:PORT] or [IPv6][:PORT] (plain DNS; port 53 by default),
          https://NAME[:PORT]/PATH (DNS over HTTPS, RFC 8484) or tls://NAME[:PORT] (DNS over TLS,
          RFC 7858, port 853 by default). An encrypted upstream's certificate is always verified
          against NAME; a plain one is never used in its place unless listed. A --bootstrap or --pin
          for a NAME no upstream has is a usage error (2).
        """
    }
}
