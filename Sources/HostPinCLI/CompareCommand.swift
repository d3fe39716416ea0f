import Foundation
import HostPin

/// `hostpin compare NAME`: asks the trusted upstreams and the untrusted (local) resolver for the same
/// name, prints both answers and a hijack verdict.
struct CompareCommand: Subcommand {
    static let name = "compare"
    static let abstract = "Compare the trusted answer with the local resolver's; give a hijack verdict."
    static let usage = "hostpin compare NAME [--server IP:PORT|URL]... [--bootstrap NAME=IP[,IP...]]... "
        + "[--pin NAME=sha256//BASE64]... [--ca-file FILE] [--local IP:PORT] [--family 4|6|any] [--timeout SECONDS] [--json]"
    static var help: String {
        """
        OVERVIEW: \(abstract)

        USAGE: \(usage)

        ARGUMENTS:
          NAME                 The host name to compare.

        OPTIONS:
        \(TrustedOptions.helpLines)
          --local IP:PORT      The untrusted resolver to check (default: the system's configured
                               resolver, read from /etc/resolv.conf, never written).
          --json               Print one JSON object: {name, trusted, local, verdict}; trusted and
                               local are shaped as `hostpin lookup --json` objects.
          -h, --help           Show this help.

        OUTPUT:
          trusted (IP:PORT): ADDRESS, ...   (or the error)
          local (IP:PORT): ADDRESS, ...     (or the error)
          verdict: consistent | hijacked | inconclusive
          hijacked: the local side gives an address the trusted side does not, answers a name the
          trusted side says does not exist, or says NXDOMAIN for a name that exists. When the trusted
          side fails there is nothing to compare against: no verdict, exit 3.

        \(UpstreamSelection.helpSection)

        EXIT STATUS:
        \([ExitStatus.success, .usage, .upstreamFailure, .hijacked, .inconclusive].map(\.helpLine).joined(separator: "\n"))
        """
    }

    /// The name compared.
    let name: HostName
    /// `--server`, `--family`, `--timeout` (the budget also bounds the local side).
    let options: TrustedOptions
    /// `--local`, or `nil` for the system's resolver.
    let local: Upstream?
    /// `--json`.
    let json: Bool

    init(parsing parser: inout OptionParser) throws(UsageError) {
        json = try parser.flag("--json")
        options = try TrustedOptions(parsing: &parser)
        local = try parser.values("--local") { text throws(UsageError) in
            try Upstream.commandLineValue(text, option: "--local", plainOnly: true)
        }.last
        let texts = parser.positionals()
        try parser.finish()
        guard let first = texts.first else { throw .missingArgument("NAME (give the host name to compare)") }
        if texts.count > 1 { throw .unexpectedArgument(texts[1]) }
        name = try HostName.commandLineArgument(first)
    }

    func run() async -> ExitStatus {
        async let trusted = resolveTrusted()
        async let untrusted = resolveUntrusted()
        let (truth, claim) = await (trusted, untrusted)
        let verdict: HijackVerdict?
        switch truth {
        case .success: verdict = HijackVerdict(trusted: truth, untrusted: claim)
        case .failure(let error): verdict = error.isNegativeAnswer ? HijackVerdict(trusted: truth, untrusted: claim) : nil
        }
        if json {
            Console.out(JSONLinesFormatter.line([
                "name": name.text,
                "trusted": JSONLinesFormatter.object(for: truth, name: name),
                "local": JSONLinesFormatter.object(for: claim, name: name, untrusted: true),
                "verdict": verdict.map { $0.rawValue as Any } ?? NSNull(),
            ]))
        } else {
            Console.out("trusted (\(trustedLabel(truth))): \(Self.summary(truth))")
            Console.out("local (\(local?.description ?? "system")): \(Self.summary(claim, untrusted: true))")
            if let verdict { Console.out("verdict: \(verdict)") }
        }
        guard let verdict else {
            if case .failure(let error) = truth { Console.error("hostpin: \(error)") }
            return .upstreamFailure
        }
        switch verdict {
        case .consistent: return .success
        case .hijacked: return .hijacked
        case .inconclusive: return .inconclusive
        }
    }

    /// The trusted side: a plain ``TrustedResolver`` (one query, nothing worth caching).
    private func resolveTrusted() async -> Result<Resolution, ResolutionError> {
        do throws(ResolutionError) {
            let resolver = try await TrustedOptions.makeResolver(options.configuration(useTCP: false))
            return .success(try await resolver.resolve(name, family: options.family))
        } catch {
            return .failure(error)
        }
    }

    /// The untrusted side, with per-try timeouts sized so both tries fit into the same budget as the
    /// trusted side (``UntrustedResolver`` has no total budget of its own).
    private func resolveUntrusted() async -> Result<Resolution, ResolutionError> {
        do throws(ResolutionError) {
            let resolver = try UntrustedResolver(server: local, timeout: options.perTryTimeout(upstreamCount: 1), tries: 2)
            return .success(try await resolver.resolve(name, family: options.family))
        } catch {
            return .failure(error)
        }
    }

    /// Which trusted upstream the line speaks for: the one that answered, else every one asked.
    private func trustedLabel(_ outcome: Result<Resolution, ResolutionError>) -> String {
        if case .success(let resolution) = outcome {
            return resolution.upstream?.description ?? "literal"
        }
        return options.selection.upstreams.map(\.description).joined(separator: ", ")
    }

    /// One side's answer on one line: its addresses, or the error sentence.
    static func summary(_ outcome: Result<Resolution, ResolutionError>, untrusted: Bool = false) -> String {
        switch outcome {
        case .success(let resolution): resolution.addresses.map(\.address.description).joined(separator: ", ")
        case .failure(let error): untrusted ? error.untrustedDescription : error.description
        }
    }
}
