import HostPin

/// `hostpin lookup NAME...`: resolves names through the trusted upstreams only and prints dig-style answer
/// lines or JSON Lines.
struct LookupCommand: Subcommand {
    static let name = "lookup"
    static let abstract = "Resolve names through trusted upstreams only; print dig-style answers."
    static let usage = "hostpin lookup NAME... [--server IP:PORT]... [--family 4|6|any] [--timeout SECONDS] [--tcp] [--json]"
    static var help: String {
        """
        OVERVIEW: \(abstract)

        USAGE: \(usage)

        ARGUMENTS:
          NAME                 A host name (Unicode names are converted to A-labels) or an IP literal.
                               Names are resolved concurrently and printed in the order given.

        OPTIONS:
        \(TrustedOptions.helpLines)
          --tcp                Send every query over TCP.
          --json               Print one JSON object per name per line (JSON Lines).
          -h, --help           Show this help.

        OUTPUT:
          One line per record, as `dig +noall +answer` prints them, CNAMEs first:
            alias.example.test. 5 IN CNAME www.example.test.
            www.example.test. 3600 IN A 127.0.0.10
          A name that fails prints one sentence to standard error: `hostpin: <reason>`.
          With --json: {name, addresses: [{address, family, ttl}], cnames: [{alias, target, ttl}],
          ttl, upstream, source, receivedAt (RFC 3339, UTC)} or, for a failure, {name, error, code}.

        \(UpstreamSelection.helpSection)

        EXIT STATUS:
        \([ExitStatus.success, .notFound, .usage, .upstreamFailure].map(\.helpLine).joined(separator: "\n"))
        """
    }

    /// The names to resolve, validated, in command-line order (duplicates kept).
    let names: [HostName]
    /// `--server`, `--family`, `--timeout`.
    let options: TrustedOptions
    /// `--tcp`.
    let useTCP: Bool
    /// `--json`.
    let json: Bool

    init(parsing parser: inout OptionParser) throws(UsageError) {
        json = try parser.flag("--json")
        useTCP = try parser.flag("--tcp")
        options = try TrustedOptions(parsing: &parser)
        let texts = parser.positionals()
        try parser.finish()
        guard !texts.isEmpty else { throw .missingArgument("NAME (give at least one host name)") }
        var names: [HostName] = []
        for text in texts { names.append(try HostName.commandLineArgument(text)) }
        self.names = names
    }

    func run() async -> ExitStatus {
        let outcomes: [Result<Resolution, ResolutionError>]
        do throws(ResolutionError) {
            let resolver = CachingResolver(upstream: try TrustedResolver(configuration: options.configuration(useTCP: useTCP)))
            outcomes = await Self.resolve(names, family: options.family, with: resolver)
        } catch {
            // No resolver, no answers: report the setup failure once per name so JSON stays one line per name.
            outcomes = names.map { _ in .failure(error) }
        }
        var status = ExitStatus.success
        for (name, outcome) in zip(names, outcomes) {
            if json { Console.out(JSONLinesFormatter.line(JSONLinesFormatter.object(for: outcome, name: name))) }
            switch outcome {
            case .success(let resolution):
                if !json { DigFormatter.lines(for: resolution).forEach(Console.out) }
            case .failure(let error):
                Console.error("hostpin: \(error)")
                status = Self.worse(status, error.lookupExitStatus)
            }
        }
        return status
    }

    /// Resolves every name at once (a cache in front makes repeated names one query) and returns the
    /// outcomes in the order of `names`, whatever order they finish in.
    static func resolve(_ names: [HostName], family: AddressFamily, with resolver: any HostResolver) async
        -> [Result<Resolution, ResolutionError>]
    {
        await withTaskGroup(of: (Int, Result<Resolution, ResolutionError>).self) { group in
            for (index, name) in names.enumerated() {
                group.addTask {
                    do throws(ResolutionError) {
                        return (index, .success(try await resolver.resolve(name, family: family)))
                    } catch {
                        return (index, .failure(error))
                    }
                }
            }
            var outcomes = [Result<Resolution, ResolutionError>](repeating: .failure(.cancelled), count: names.count)
            for await (index, outcome) in group { outcomes[index] = outcome }
            return outcomes
        }
    }

    /// The status reported when two names end with `a` and `b`: a failure to get an answer (3) outranks
    /// a usage problem (2), which outranks a negative answer (1), which outranks success.
    static func worse(_ a: ExitStatus, _ b: ExitStatus) -> ExitStatus {
        func rank(_ status: ExitStatus) -> Int {
            switch status {
            case .success: 0
            case .notFound: 1
            case .usage: 2
            case .upstreamFailure, .hijacked, .inconclusive, .couldNotResolve, .couldNotConnect, .httpError, .timedOut,
                 .tlsHandshakeFailed, .tooManyRedirects, .certificateUntrusted: 3
            }
        }
        return rank(b) > rank(a) ? b : a
    }
}
