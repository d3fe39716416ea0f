import Foundation
import HostPin

/// The trusted upstreams a command queries, chosen by precedence (DESIGN.md contracts: flags win over
/// the environment): every `--server` flag; else `HOSTPIN_UPSTREAMS=ip:port,ip:port`; else a documented
/// set of well-known public resolvers.
struct UpstreamSelection: Sendable, Equatable {
    /// Where the list came from.
    enum Origin: Sendable, Equatable {
        case flags
        case environment
        case defaults
    }

    /// The environment variable read when no `--server` is given.
    static let environmentVariable = "HOSTPIN_UPSTREAMS"

    /// The public resolvers used when neither flags nor the environment name any: Cloudflare, Google
    /// and Quad9, each on port 53. Listed in every subcommand's help.
    static let publicDefaults: [Upstream] = ["1.1.1.1:53", "8.8.8.8:53", "9.9.9.9:53"].compactMap(Upstream.init)

    /// The upstreams, in the order they are tried; never empty.
    let upstreams: [Upstream]
    /// Which source supplied them.
    let origin: Origin

    /// Chooses between `flags` (the `--server` values), `environment[HOSTPIN_UPSTREAMS]` and the defaults.
    ///
    /// An empty or blank variable counts as unset, so `HOSTPIN_UPSTREAMS= hostpin …` means "defaults".
    ///
    /// - Throws: ``UsageError/invalidEnvironment(variable:reason:)`` when the variable is consulted and
    ///   holds something that is not an `ip:port` list.
    init(flags: [Upstream], environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(UsageError)
    {
        if !flags.isEmpty {
            upstreams = flags
            origin = .flags
            return
        }
        let text = environment[Self.environmentVariable]?.trimmingCharacters(in: .whitespaces) ?? ""
        guard !text.isEmpty else {
            upstreams = Self.publicDefaults
            origin = .defaults
            return
        }
        var parsed: [Upstream] = []
        for entry in text.split(separator: ",", omittingEmptySubsequences: false) {
            do throws(Upstream.ParseError) {
                parsed.append(try Upstream.parse(entry.trimmingCharacters(in: .whitespaces)))
            } catch {
                throw .invalidEnvironment(variable: Self.environmentVariable, reason: error.description)
            }
        }
        upstreams = parsed
        origin = .environment
    }

    /// The help section describing the precedence and the default set.
    static var helpSection: String {
        """
        UPSTREAMS:
          Trusted upstreams come from every --server flag; without one, from
          \(environmentVariable)=IP:PORT,IP:PORT; with neither, from the public set
          \(publicDefaults.map(\.description).joined(separator: ", ")) (tried in that order).
        """
    }
}
