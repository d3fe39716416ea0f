import HostPin

/// One thing wrong in a configuration file (`--config`, `check-config`), at its key path
/// (`upstreams.servers[1]`, `cache.maxStale`, `rules[3].to`).
package struct ConfigProblem: Sendable, Hashable, CustomStringConvertible {
    /// Where the problem is.
    package let keyPath: String
    /// What is wrong there.
    package let reason: Reason

    package init(_ keyPath: String, _ reason: Reason) {
        self.keyPath = keyPath
        self.reason = reason
    }

    /// `cache.maxStale: '-1' is not a whole number of seconds from 0 to 31536000`.
    package var description: String { "\(keyPath): \(reason)" }

    /// What is wrong at a key path. Closed: each case is a sentence written once, here.
    package enum Reason: Sendable, Hashable, CustomStringConvertible {
        /// The value has the wrong JSON type: `expected` is "a string", `found` "a number".
        case wrongType(expected: String, found: String)
        /// A key the object does not take; `allowed` lists the keys it does.
        case unknownKey(allowed: [String])
        /// An empty list where the key, if given, must name something.
        case empty
        /// A number outside what the key takes; `expected` says what it takes ("a whole number from 0 to 900").
        case outOfRange(String, expected: String)
        /// One of a fixed set of words was expected.
        case badChoice(String, choices: [String])
        /// Not an upstream (`IP[:PORT]`, `https://NAME/PATH`, `tls://NAME`).
        case badUpstream(Upstream.ParseError)
        /// A bootstrap address or a pin that does not parse.
        case badEntry(EncryptedUpstreamError)
        /// Not a host name.
        case badHostName(String, HostNameProblem)
        /// Not a domain name (an `resolution.insecureDomains` entry): the sentence, which names it.
        case badDomain(reason: String)
        /// Not `IP:PORT` (IPv6 as `[IP]:PORT`).
        case badListenAddress(String)
        /// A bootstrap or pin for a NAME that no upstream in `upstreams.servers` has.
        case unusedName(String, upstreamNames: [String])
        /// An encrypted upstream named by a host name with no bootstrap address, and no plain upstream to
        /// look the name up through.
        case unbootstrapped(upstream: String, name: String)
        /// A listening address other than loopback while `listeners.allowRemote` is not true.
        case notLoopback(String)
        /// `cache.minTTL` above `cache.maxTTL`.
        case minimumAboveMaximum(minimum: UInt32, maximum: UInt32)
        /// A file the key names cannot be used: the path and why.
        case file(String, reason: String)
        /// A `cache.shared` URL that cannot be used (``RedisEndpointError``).
        case badSharedCacheURL(String, reason: String)
        /// `listeners.control` is neither an absolute path nor a bare file name, or is too long for a
        /// Unix socket address.
        case badSocketPath(String, reason: String)
        /// `watch.local` is neither `true` nor a plain DNS server's `IP[:PORT]`.
        case badWatchedResolver(String)
        /// A `watch.ordinary` range that is not CIDR: the parser's reason, which names it.
        case badRange(String, reason: String)
        /// A key that means something only beside another (`watch.interval` without `watch.local`).
        case needs(String)
        /// A problem in the embedded rules (the key path is the rule's).
        case rule(RuleProblem.Reason)

        package var description: String {
            switch self {
            case .wrongType(let expected, let found): "must be \(expected), not \(found)"
            case .unknownKey(let allowed): "unknown key (this object takes " + allowed.joined(separator: ", ") + ")"
            case .empty: "must not be empty (leave the key out for the default)"
            case .outOfRange(let text, let expected): "\(text) is not \(expected)"
            case .badChoice(let text, let choices):
                "'\(text)' is not " + (choices.count > 1 ? choices.dropLast().joined(separator: ", ") + " or " : "") + (choices.last ?? "")
            case .badUpstream(let error): error.description
            case .badEntry(let error): error.description
            case .badHostName(let text, let problem): "'\(text)' is not a valid host name: \(problem)"
            case .badDomain(let reason): reason
            case .badListenAddress(let text): "'\(text)' is not IP:PORT (IPv6 as [IP]:PORT)"
            case .unusedName(let name, let upstreamNames):
                "\(name) is the name of no upstream in upstreams.servers ("
                    + (upstreamNames.isEmpty ? "none listed is named: plain ones are only addresses"
                        : "their names: " + upstreamNames.joined(separator: ", ")) + ")"
            case .unbootstrapped(let upstream, let name):
                "'\(upstream)' names its server by host name, and nothing says where \(name) is: give "
                    + "upstreams.bootstrap.\(name), or list a plain upstream (IP:PORT) to look it up through"
            case .notLoopback(let address):
                "\(address) is not a loopback address; set listeners.allowRemote to true to let other hosts use it"
            case .minimumAboveMaximum(let minimum, let maximum):
                "\(minimum) is above cache.maxTTL (\(maximum))"
            case .file(let path, let reason): "cannot use '\(path)': \(reason)"
            case .badSharedCacheURL(let text, let reason): "'\(text)': \(reason)"
            case .badSocketPath(let path, let reason): "'\(path)' \(reason)"
            case .badWatchedResolver(let text):
                "'\(text)' is not a DNS server's IP[:PORT] (or true: the first nameserver of /etc/resolv.conf)"
            case .badRange(_, let reason): reason
            case .needs(let key): "applies only with \(key)"
            case .rule(let reason): reason.description
            }
        }
    }
}
