import HostPin

/// The options every resolving subcommand shares (`--server`, `--bootstrap`, `--pin`, `--ca-file`,
/// `--family`, `--timeout`, and the DNSSEC options `--dnssec`, `--trust-anchor`, `--insecure-domain`),
/// parsed in one place like swift-argument-parser's `@OptionGroup`, so they mean the same thing everywhere.
package struct TrustedOptions: Sendable {
    /// The trusted upstreams and where they came from.
    package let selection: UpstreamSelection
    /// The address records asked for.
    package let family: AddressFamily
    /// The total time one resolution may take (`--timeout`, seconds).
    package let budget: Duration
    /// `--ca-file`: CA certificates trusted besides the system's, for every TLS check (DoH, DoT, fetch).
    package let caFile: String?
    /// `--dnssec`, `--trust-anchor` (or `HOSTPIN_TRUST_ANCHOR`), `--insecure-domain`.
    package let dnssec: DNSSECOptions

    /// `--route` (and the configuration file's `routes`): split DNS, each route's encrypted upstreams
    /// with their `--bootstrap`, `--pin` and `--ca-file`.
    package let routes: RouteTable

    /// The budget when `--timeout` is not given.
    package static let defaultBudget: Duration = .seconds(5)

    /// Takes `--server`, `--bootstrap`, `--pin` (each repeatable), `--ca-file`, `--family`, `--timeout` and
    /// the DNSSEC options from `parser`, then resolves the upstream and trust-anchor precedence against the
    /// environment (flags win).
    package init(parsing parser: inout OptionParser) throws(UsageError) {
        let servers = try parser.values("--server") { text throws(UsageError) in
            try Upstream.commandLineValue(text, option: "--server")
        }
        let bootstrap = try parser.values("--bootstrap") { text throws(UsageError) in
            do throws(EncryptedUpstreamError) {
                return try UpstreamBootstrap.parse(text)
            } catch {
                throw .invalidValue(option: "--bootstrap", reason: error.description)
            }
        }
        let pins = try parser.values("--pin") { text throws(UsageError) in
            do throws(EncryptedUpstreamError) {
                return try UpstreamPin.parse(text)
            } catch {
                throw .invalidValue(option: "--pin", reason: error.description)
            }
        }
        caFile = try parser.values("--ca-file") { path throws(UsageError) in
            try InputFile.checkReadable(path, option: "--ca-file")
            if let problem = CAFileProblem(checking: path) { throw .caFile(problem) }
            return path
        }.last
        family = try parser.value("--family", as: AddressFamily.self, expected: "4, 6 or any") ?? .any
        budget = try parser.values("--timeout", Self.parseSeconds).last ?? Self.defaultBudget
        dnssec = try DNSSECOptions(parsing: &parser)
        let routes = try RouteOptions.parse(&parser, defaultAnchors: dnssec.configuration.trustAnchors)
        selection = try UpstreamSelection(flags: servers, bootstrap: bootstrap, pins: pins, extraCAFile: caFile,
                                          routeUpstreams: routes.routes.flatMap(\.upstreams))
        self.routes = try Self.configured(routes, bootstrap: bootstrap, pins: pins, extraCAFile: caFile)
    }

    /// `routes` with `bootstrap`, `pins` and `extraCAFile` applied to their encrypted upstreams.
    ///
    /// - Throws: ``UsageError/unbootstrapped(upstream:name:)`` for an encrypted upstream of a route whose
    ///   NAME has no address (a route's NAMEs are not looked up: give `--bootstrap`).
    private static func configured(_ routes: RouteTable, bootstrap: [UpstreamBootstrap], pins: [UpstreamPin],
                                   extraCAFile: String?) throws(UsageError) -> RouteTable {
        guard !routes.isEmpty else { return routes }
        var configured: [Route] = []
        for var route in routes.routes {
            var upstreams: [Upstream] = []
            for upstream in route.upstreams {
                do throws(EncryptedUpstreamError) {
                    upstreams.append(try upstream.configured(bootstrap: bootstrap, pins: pins, extraCAFile: extraCAFile))
                } catch {
                    throw .unbootstrapped(upstream: upstream.description, name: upstream.encrypted?.name.text ?? "")
                }
            }
            route.upstreams = upstreams
            configured.append(route)
        }
        do throws(RouteError) {
            return try RouteTable(configured)
        } catch {
            throw .invalidValue(option: "--route", reason: error.description)
        }
    }

    /// Parses `--timeout`: seconds, fractions allowed, from 1 ms to one hour (the upper bound keeps the
    /// conversion to ``Duration`` far from overflow and catches typos such as `50000`).
    private static func parseSeconds(_ text: String) throws(UsageError) -> Duration {
        guard let seconds = Double(text), seconds.isFinite, seconds >= 0.001, seconds <= 3600 else {
            throw .invalidValue(option: "--timeout", reason: "'\(text)' is not a number of seconds from 0.001 to 3600")
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// c-ares's first per-try timeout: small enough that every upstream's two tries (t, then 2t: c-ares
    /// doubles it) fit into three quarters of the budget together, so failover reaches every upstream and
    /// a silent one is reported by name ("127.0.0.1:5353: timeout") rather than by the budget running
    /// out; at most c-ares's usual 1 s, at least 50 ms. An encrypted upstream gets both tries' time for
    /// its one exchange (``TrustedResolver``).
    package func perTryTimeout(upstreamCount: Int) -> Duration {
        Self.perTryTimeout(budget: budget, upstreamCount: upstreamCount)
    }

    /// ``perTryTimeout(upstreamCount:)`` for a `budget`.
    package static func perTryTimeout(budget: Duration, upstreamCount: Int) -> Duration {
        let share = budget / (4 * max(1, upstreamCount))
        return min(.seconds(1), max(.milliseconds(50), share))
    }

    /// The trusted resolver's configuration for these options.
    package func configuration(useTCP: Bool) -> TrustedResolver.Configuration {
        var configuration = Self.configuration(upstreams: selection.upstreams, budget: budget, useTCP: useTCP,
                                               dnssec: dnssec.configuration)
        configuration.routes = routes
        return configuration
    }

    /// The trusted resolver's configuration for `upstreams` with these options' rules: the per-try
    /// timeout from `budget`, two tries, validation as `dnssec` says (by default the command line's
    /// default: ``DNSSECOptions/defaultMode`` with the built-in root anchors).
    package static func configuration(upstreams: [Upstream], budget: Duration, useTCP: Bool,
                                      dnssec: DNSSECConfiguration = DNSSECOptions.defaults.configuration)
        -> TrustedResolver.Configuration
    {
        var configuration = TrustedResolver.Configuration(upstreams: upstreams)
        configuration.dnssec = dnssec
        configuration.budget = budget
        configuration.timeout = perTryTimeout(budget: budget, upstreamCount: upstreams.count)
        configuration.tries = 2
        configuration.useTCP = useTCP
        return configuration
    }

    /// The trusted resolver these options describe (``makeResolver(_:log:)``): what `compare` asks.
    ///
    /// - Throws: ``ResolutionError/setupFailed(_:)`` when a transport cannot be set up.
    package func makeResolver(useTCP: Bool = false, log: ServiceLog = .console) async throws(ResolutionError) -> TrustedResolver {
        try await Self.makeResolver(configuration(useTCP: useTCP), log: log)
    }

    /// The resolver chain of a one-shot command (`lookup`, `fetch`): the trusted resolver behind a cache
    /// with single-flight — `cache`'s (its file loaded, at most `maximumEntries` answers when given) or the
    /// library's default one — so that a name asked again sends no query while its answer is fresh.
    ///
    /// - Returns: The resolver, and what writes the cache file at the end (`nil` without one).
    /// - Throws: ``ResolutionError/setupFailed(_:)`` when a transport cannot be set up.
    package func makeCachingResolver(useTCP: Bool = false, cache options: CacheOptions? = nil, maximumEntries: Int? = nil,
                                     log: ServiceLog = .console) async throws(ResolutionError)
        -> (resolver: CachingResolver, keeper: CacheKeeper?)
    {
        guard let options else { return (CachingResolver(upstream: try await makeResolver(useTCP: useTCP, log: log)), nil) }
        let cache = options.makeCache(maximumEntries: maximumEntries, refreshAhead: false)
        let caching = CachingResolver(upstream: try await makeResolver(useTCP: useTCP, log: log), cache: cache)
        let keeper = await options.start(caching, family: family, periodicSaving: false, log: log)
        return (caching, keeper)
    }

    /// The resolver for `configuration`, once the NAME of every encrypted upstream without a bootstrap
    /// address has been looked up through the plain upstreams listed (once, at start), each lookup told
    /// in `log`.
    ///
    /// - Throws: ``ResolutionError/setupFailed(_:)`` when a transport cannot be set up.
    package static func makeResolver(_ configuration: TrustedResolver.Configuration, log: ServiceLog = .console) async throws(ResolutionError)
        -> TrustedResolver
    {
        let (bootstrapped, lookups) = await configuration.bootstrappingThroughPlainUpstreams()
        for lookup in lookups {
            let servers = lookup.through.map(\.description).joined(separator: ", ")
            switch lookup.outcome {
            case .success(let addresses):
                log.log(.info, "hostpin: no --bootstrap gives \(lookup.name)'s address; looked up through the plain "
                              + "upstreams (\(servers)): \(addresses.map(\.description).joined(separator: ", "))")
            case .failure(let error):
                log.error("hostpin: no --bootstrap gives \(lookup.name)'s address, and looking it up through the "
                              + "plain upstreams (\(servers)) failed: \(error); its encrypted upstreams will fail")
            }
        }
        return try TrustedResolver(configuration: bootstrapped)
    }

    /// The help lines for these options.
    package static let helpLines = """
          --server IP:PORT|URL A trusted upstream: IP[:PORT] or [IPv6][:PORT] (plain DNS, port 53 by
                               default), https://NAME[:PORT]/PATH (DNS over HTTPS) or tls://NAME[:PORT]
                               (DNS over TLS); repeat for failover, tried in order. Wins over
                               HOSTPIN_UPSTREAMS.
          --bootstrap NAME=IP[,IP...]
                               Where an encrypted upstream's NAME is; repeatable. Without one, NAME is
                               looked up once, at start, through the plain upstreams listed (and said
                               so on standard error); with none listed, that is a usage error (2).
          --pin NAME=sha256//BASE64[;sha256//BASE64...]
                               Accept NAME's certificate only with one of these public keys (SHA-256
                               of its SubjectPublicKeyInfo, base64); repeatable.
          --ca-file FILE       Also trust the CA certificates in FILE (PEM), besides the system's,
                               for every TLS check (DoH, DoT, https). Verification is never turned off.
                               A file without a PEM certificate is a usage error (2; fetch: 77).
          --family 4|6|any     Ask for A (4), AAAA (6) or both (any; the default).
          --timeout SECONDS    Total time for one name, fractions allowed (default 5).
        \(DNSSECOptions.helpLines(width: 21))
        \(RouteOptions.helpLines)
        """
}
