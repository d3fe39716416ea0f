import Foundation
import HostPin
import HostPinService

/// `hostpin compare NAME...` and `hostpin compare --batch FILE|-`: asks the trusted upstreams and the
/// untrusted (local) resolver for the same names, prints both answers, the hijack reasons and a verdict
/// per name.
struct CompareCommand: Subcommand {
    static let name = "compare"
    static let abstract = "Compare the trusted answer with the local resolver's; give a hijack verdict and its reasons."
    static let usage = "hostpin compare NAME... | --batch FILE|- [--server IP:PORT|URL]... [--bootstrap NAME=IP[,IP...]]... "
        + "[--pin NAME=sha256//BASE64]... [--ca-file FILE] "
        + "[--dnssec validate|report|off] [--trust-anchor FILE]... [--insecure-domain NAME]... [--route DOMAIN=UPSTREAM[,UPSTREAM...]]... "
        + "[--local IP:PORT] [--hijack-list FILE] [--ordinary CIDR]... "
        + "[--no-probe] [--probe-https [--https-port PORT]] [--family 4|6|any] [--timeout SECONDS] [--json]"
    /// Names compared at once from a batch (each with its probes).
    static let concurrency = 16

    static var help: String {
        """
        OVERVIEW: \(abstract)

        USAGE: \(usage)

        ARGUMENTS:
          NAME                 A host name to compare; several may be given.

        OPTIONS:
          --batch FILE|-       Read the names from FILE (- for standard input) instead of the arguments:
                               one per line; blank lines and lines starting with # are ignored. \(concurrency)
                               names are compared at once, reported in input order.
        \(TrustedOptions.helpLines)
          --local IP:PORT      The untrusted resolver to check (default: the system's configured
                               resolver, read from /etc/resolv.conf, never written).
        \(HijackOptions.helpLines)
          --json               Print one JSON object per name per line: {name, trusted, local, reasons:
                               [{code, detail}], verdict}; trusted and local are shaped as
                               `hostpin lookup --json` objects; verdict is null when the trusted side failed.
          -h, --help           Show this help.

        OUTPUT:
          name: NAME
          trusted (IP:PORT): ADDRESS, ...   (or the error)
          local (IP:PORT): ADDRESS, ...     (or the error)
          reason: CODE: sentence            (one line per reason)
          verdict: consistent | hijacked | inconclusive
          consistent: every local address is a trusted one, or neither side has an address.
          hijacked, for local addresses the trusted side did not give, with the reason codes:
            special-range         in an RFC 6890 block (private, loopback, link-local, CGNAT,
                                  documentation, ...) not made --ordinary, while no trusted address is;
            nxdomain-rewrite      the trusted side says the name does not exist;
            wildcard              the local resolver gives the same address for a random name under
                                  the same parent, which the trusted side says does not exist;
            known-hijack-address  on the --hijack-list;
            bad-certificate       (--probe-https) it serves no certificate valid for NAME, a trusted
                                  address does;
            bad-signature         the trusted side validated NAME as secure, and the local answer
                                  (asked again with DO and CD) carries RRSIGs that fail: changed after
                                  signing (a local NXDOMAIN or NODATA whose denial fails so, too).
          inconclusive: disjoint (different addresses and nothing above: CDNs answer so), blocked (the
            local resolver says NXDOMAIN or NODATA for a name that resolves), local-failed;
            no-signatures beside them: a secure name's local answer carries no RRSIG at all (local
            resolvers often strip them: no evidence either way).
          A name under .test, .internal or .local is judged as a public one. When the trusted side
          fails there is nothing to compare against: no verdict, exit 3, and on standard error one
          sentence that starts with the name (`hostpin: NAME: no trusted upstream answered: ...`).

        \(UpstreamSelection.helpSection)

        EXIT STATUS:
        \([ExitStatus.success, .usage].map(\.helpLine).joined(separator: "\n"))
        \(ExitStatus.upstreamFailure.helpLine(meaning: "a trusted upstream failed or timed out"))
        \([ExitStatus.hijacked, .inconclusive].map(\.helpLine).joined(separator: "\n"))
        Over several names: 3 if any name ended with 3, else 2 if any did, else 4, else 5, else 0.
        """
    }

    /// The names compared.
    let source: NameSource
    /// `--server`, `--bootstrap`, `--pin`, `--ca-file`, `--family`, `--timeout` (the budget also bounds the
    /// local side and each probe).
    let options: TrustedOptions
    /// `--hijack-list`, `--ordinary`, `--no-probe`, `--probe-https`, `--https-port`.
    let hijack: HijackOptions
    /// `--local`, or `nil` for the system's resolver.
    let local: Upstream?
    /// `--json`.
    let json: Bool

    init(parsing parser: inout OptionParser) throws(UsageError) {
        json = try parser.flag("--json")
        options = try TrustedOptions(parsing: &parser)
        hijack = try HijackOptions(parsing: &parser)
        local = try parser.values("--local") { text throws(UsageError) in
            try Upstream.commandLineValue(text, option: "--local", plainOnly: true)
        }.last
        let batch = try parser.values("--batch") { $0 }.last
        let texts = parser.positionals()
        try parser.finish()
        source = try NameSource(batch: batch, arguments: texts, missing: "NAME (give the host name to compare, or --batch FILE)")
    }

    func run() async -> ExitStatus {
        let trusted: Result<TrustedResolver, ResolutionError>
        do throws(ResolutionError) {
            trusted = .success(try await options.makeResolver())
        } catch {
            trusted = .failure(error)
        }
        // Per-try timeouts sized so both tries fit into the trusted side's budget (``UntrustedResolver``
        // has no total budget of its own).
        let untrusted = Result { () throws(ResolutionError) in
            try UntrustedResolver(server: local, timeout: options.perTryTimeout(upstreamCount: 1), tries: 2)
        }
        let comparer = NameComparer(trusted: trusted, local: untrusted, family: options.family, options: hijack,
                                caFile: options.caFile, handshakeTimeout: options.budget)
        let feed = source.feed
        var status = ExitStatus.success
        while !Console.outputFailed {
            let entries = await feed.take(upTo: Self.concurrency)
            if entries.isEmpty { break }
            for finished in await Self.compareInOrder(entries, with: comparer) {
                status = Self.worse(status, report(finished))
            }
            if entries.contains(where: { if case .unreadable = $0 { true } else { false } }) { break }
        }
        return status
    }

    /// One entry's end, ready to print.
    private enum Finished: Sendable {
        case compared(NameComparison)
        case invalid(text: String, problem: HostNameProblem)
        case unreadable(String)
    }

    /// Compares every name of `entries` at once; the results in input order.
    private static func compareInOrder(_ entries: [LookupEntry], with comparer: NameComparer) async -> [Finished] {
        await withTaskGroup(of: (Int, Finished).self) { group in
            var finished: [Finished?] = Array(repeating: nil, count: entries.count)
            for (index, entry) in entries.enumerated() {
                switch entry {
                case .name(let name): group.addTask { (index, .compared(await comparer.compare(name))) }
                case .invalid(let text, let problem): finished[index] = .invalid(text: text, problem: problem)
                case .unreadable(let sentence): finished[index] = .unreadable(sentence)
                }
            }
            for await (index, result) in group { finished[index] = result }
            return finished.compactMap { $0 }
        }
    }

    /// Prints one entry and returns its exit status.
    private func report(_ finished: Finished) -> ExitStatus {
        switch finished {
        case .compared(let comparison):
            if json {
                Console.out(JSONLinesFormatter.line(Self.object(for: comparison)))
            } else {
                Console.out(lines: lines(for: comparison))
            }
            // The sentence names the name, as lookup's does: among several, it says which had no trusted answer.
            if comparison.verdict == nil, case .failure(let error) = comparison.trusted {
                Console.error("hostpin: \(error.sentence(about: comparison.name.text))")
            }
            return comparison.status
        case .invalid(let text, let problem):
            let error = ResolutionError.badName(text, problem)
            if json { Console.out(JSONLinesFormatter.line(for: .failure(error), nameText: text)) }
            Console.error("hostpin: \(error)")
            return .usage
        case .unreadable(let sentence):
            Console.error("hostpin: \(sentence)")
            return .usage
        }
    }

    /// The text lines for one name: its name, both answers, one line per reason, the verdict (none when
    /// the trusted side failed). Reason lines are escaped: they quote list comments and TLS messages.
    private func lines(for comparison: NameComparison) -> [String] {
        var lines = [
            "name: \(comparison.name)",
            "trusted (\(trustedLabel(comparison.trusted))): \(Self.summary(comparison.trusted))",
            "local (\(local?.description ?? "system")): \(Self.summary(comparison.local, untrusted: true))",
        ]
        guard let verdict = comparison.verdict else { return lines }
        lines += verdict.reasons.map { Console.escaped("reason: \($0.code.rawValue): \($0.detail)") }
        lines.append("verdict: \(verdict)")
        return lines
    }

    /// The JSON object for one name.
    static func object(for comparison: NameComparison) -> [String: Any] {
        [
            "name": comparison.name.text,
            "trusted": JSONLinesFormatter.object(for: comparison.trusted, name: comparison.name),
            "local": JSONLinesFormatter.object(for: comparison.local, name: comparison.name, untrusted: true),
            "reasons": (comparison.verdict?.reasons ?? []).map { ["code": $0.code.rawValue, "detail": $0.detail] },
            "verdict": comparison.verdict.map { $0.description as Any } ?? NSNull(),
        ]
    }

    /// Which trusted upstream the line speaks for: the one that answered, else every one asked.
    private func trustedLabel(_ outcome: Result<Resolution, ResolutionError>) -> String {
        if case .success(let resolution) = outcome {
            return resolution.upstream?.description ?? "literal"
        }
        return options.selection.upstreams.map(\.description).joined(separator: ", ")
    }

    /// One side's answer on one line: its addresses, then its DNSSEC line when it was validated
    /// (`127.0.0.10 ; secure`, `… ; bogus (report mode): REASON`), or the error sentence (a bogus answer's
    /// names the reason: which RRset, which key, what was wrong).
    static func summary(_ outcome: Result<Resolution, ResolutionError>, untrusted: Bool = false) -> String {
        switch outcome {
        case .success(let resolution):
            resolution.addresses.map(\.address.description).joined(separator: ", ")
                + (DigFormatter.dnssecLine(for: resolution.dnssec).map { " " + $0 } ?? "")
        case .failure(let error): untrusted ? error.untrustedDescription : error.description
        }
    }

    /// The status over two names that ended with `a` and `b`: a trusted-side failure (3) outranks a bad
    /// name (2), which outranks hijacked (4), then inconclusive (5), then consistent (0).
    static func worse(_ a: ExitStatus, _ b: ExitStatus) -> ExitStatus {
        func rank(_ status: ExitStatus) -> Int {
            switch status {
            case .success: 0
            case .inconclusive: 1
            case .hijacked: 2
            case .usage, .notFound: 3
            case .upstreamFailure, .couldNotResolve, .couldNotConnect, .httpError, .timedOut, .tlsHandshakeFailed,
                 .tooManyRedirects, .blocked, .certificateUntrusted, .caFileProblem: 4
            }
        }
        return rank(b) > rank(a) ? b : a
    }
}
