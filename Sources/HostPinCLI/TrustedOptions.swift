import HostPin

/// The options every resolving subcommand shares (`--server`, `--family`, `--timeout`), parsed in one
/// place like swift-argument-parser's `@OptionGroup`, so they mean the same thing everywhere.
struct TrustedOptions: Sendable {
    /// The trusted upstreams and where they came from.
    let selection: UpstreamSelection
    /// The address records asked for.
    let family: AddressFamily
    /// The total time one resolution may take (`--timeout`, seconds).
    let budget: Duration

    /// The budget when `--timeout` is not given.
    static let defaultBudget: Duration = .seconds(5)

    /// Takes `--server` (repeatable), `--family` and `--timeout` from `parser`, then resolves the upstream
    /// precedence against the environment.
    init(parsing parser: inout OptionParser) throws(UsageError) {
        let servers = try parser.values("--server") { text throws(UsageError) in
            try Upstream.commandLineValue(text, option: "--server")
        }
        selection = try UpstreamSelection(flags: servers)
        family = try parser.value("--family", as: AddressFamily.self, expected: "4, 6 or any") ?? .any
        budget = try parser.values("--timeout", Self.parseSeconds).last ?? Self.defaultBudget
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
    /// out; at most c-ares's usual 1 s, at least 50 ms.
    func perTryTimeout(upstreamCount: Int) -> Duration {
        let share = budget / (4 * max(1, upstreamCount))
        return min(.seconds(1), max(.milliseconds(50), share))
    }

    /// The trusted resolver's configuration for these options.
    func configuration(useTCP: Bool) -> TrustedResolver.Configuration {
        var configuration = TrustedResolver.Configuration(upstreams: selection.upstreams)
        configuration.budget = budget
        configuration.timeout = perTryTimeout(upstreamCount: selection.upstreams.count)
        configuration.tries = 2
        configuration.useTCP = useTCP
        return configuration
    }

    /// The help lines for these options.
    static let helpLines = """
          --server IP:PORT     A trusted upstream; repeat for failover, tried in order.
                               Wins over HOSTPIN_UPSTREAMS.
          --family 4|6|any     Ask for A (4), AAAA (6) or both (any; the default).
          --timeout SECONDS    Total time for one name, fractions allowed (default 5).
        """
}
