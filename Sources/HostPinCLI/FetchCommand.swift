import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin
import HostPinService
import HostPinURL

/// `hostpin fetch URL`: one HTTP(S) request, curl-style, through a URLSession pinned by HostPin — the
/// host resolved through the trusted upstreams only, the request sent to that address, and for https
/// the certificate checked against the host name. The body streams to standard output (or `-o FILE`).
struct FetchCommand: Subcommand {
    static let name = "fetch"
    static let abstract = "Fetch a URL from the address the trusted upstreams give, as curl would."
    static let usage = "hostpin fetch URL [--config FILE] [--server IP:PORT|URL]... [--bootstrap NAME=IP[,IP...]]... "
        + "[--pin NAME=sha256//BASE64]... [--ca-file FILE] "
        + "[--dnssec validate|report|off] [--trust-anchor FILE]... [--insecure-domain NAME]... [--route DOMAIN=UPSTREAM[,UPSTREAM...]]... [--family 4|6|any] [--timeout SECONDS] "
        + "[-i] [-o FILE] [-X METHOD] [-d DATA] [--data-binary @FILE|DATA] [--data-raw DATA] [-H 'Name: value']... [-L] [--fail] "
        + "[--max-time SECONDS] [--rules FILE] [-v]"
    /// The hop limit of `-L`: URLSession's default (curl's is 50).
    static let maxRedirects = 16

    static var help: String {
        """
        OVERVIEW: \(abstract)

        USAGE: \(usage)

        ARGUMENTS:
          URL                  An http or https URL (http:// is assumed without a scheme, as curl does).
                               Its host is resolved through the trusted upstreams only and the request is
                               sent to that address; https verifies the certificate against the host name.

        OPTIONS:
        \(ConfigOption.helpLines(width: 21))
        \(TrustedOptions.helpLines)
                               (--timeout bounds each name resolution; --max-time the whole transfer.
                               A --ca-file that cannot be opened is a usage error (2); a regular file
                               without a PEM certificate exits 77 before any request, whatever the
                               URL's scheme.)
          -i, --include        Print the status line (HTTP/1.1 CODE REASON) and the header fields
                               (sorted by name) before the body, with CRLF line ends as curl does.
          -o, --output FILE    Write the response to FILE instead of standard output (- for standard
                               output). FILE is created when a response arrives.
          -X, --request METHOD Send METHOD instead of GET (or POST when there is a body).
          -d, --data DATA      Send DATA as the body of a POST with Content-Type
                               application/x-www-form-urlencoded (unless -H sets one). @FILE sends FILE's
                               contents without CR and LF characters, @- standard input. Several
                               -d/--data-binary/--data-raw values are joined with '&'.
          --data-binary DATA   Like -d, but @FILE is sent byte for byte.
          --data-raw DATA      Like -d, but a leading @ is sent as is.
          -H, --header 'Name: value'
                               Add a header field; repeatable. 'Name:' removes it, 'Name;' sends it empty.
          -L, --location       Follow redirects, up to \(maxRedirects) (then exit 47). Each hop's host is resolved
                               and pinned on its own. Redirects follow URLSession's method rules, not
                               curl's: 301 and 302 turn POST into GET and 303 turns every method but HEAD
                               into GET, dropping the body; 307 and 308 keep the method and the body.
                               -X applies to the first request only (curl's -X sticks to every hop).
                               As in curl, Authorization and Cookie from -H go only to hops to the
                               first URL's origin (same scheme, host and port), other -H fields to
                               every hop. With -i only the last response's head is printed. Without
                               -L, a 3xx is the response (exit 0), as in curl.
          -f, --fail           When the status is 400 or more, print nothing of the response, say
                               "The requested URL returned error: CODE" and exit 22.
          --max-time SECONDS   The longest the whole operation may take (resolution, connection,
                               transfer), fractions allowed; then exit 28.
          -v, --verbose        When the request ends, describe it on standard error in lines starting
                               with '* ' (curl -v's habit): each hop's rules, addresses and where they
                               came from, connection attempts (ms from the start), the address
                               connected to and the transport, the status; then bytes and duration.
        \(RulesOption.helpLines)
          -h, --help           Show this help.

        OUTPUT:
          The response body as it arrives, unchanged. Errors go to standard error as one sentence:
          `hostpin: <reason>`. Any response is a success (exit 0), whatever its status, unless --fail.

        \(UpstreamSelection.helpSection)

        EXIT STATUS (curl's numbers):
        \(ExitStatus.success.helpLine(meaning: "a response arrived (any status, unless --fail)"))
        \(ExitStatus.transferFailed.helpLine(meaning: "any other failure (e.g. the connection broke, the output cannot be written)"))
        \(ExitStatus.usage.helpLine(meaning: "usage error: bad option or value, bad URL, unsupported scheme, invalid host name"))
        \([ExitStatus.couldNotResolve, .couldNotConnect, .httpError, .timedOut, .tlsHandshakeFailed, .tooManyRedirects,
           .blocked, .certificateUntrusted, .caFileProblem].map(\.helpLine).joined(separator: "\n"))
        """
    }

    /// The request: URL, method, body, headers.
    let request: FetchRequest
    /// `--server`, `--bootstrap`, `--pin`, `--ca-file`, `--family`, `--timeout` (the resolver's budget per
    /// name).
    let options: TrustedOptions
    /// `-o`, `-i`, `--fail`.
    let output: FetchTransfer.Options
    /// `-L`.
    let followRedirects: Bool
    /// `--max-time`, seconds.
    let maxTime: Double?
    /// `--rules`.
    let rules: Rules
    /// `-v`.
    let verbose: Bool

    init(parsing parser: inout OptionParser) throws(UsageError) {
        try ConfigOption.apply(to: &parser, command: Self.name)
        // Options with values first, so a value such as `-d -i` is not taken for a flag.
        options = try TrustedOptions(parsing: &parser)
        let outputPath = try parser.values(anyOf: ["-o", "--output"]).last
        maxTime = try parser.values("--max-time") { text throws(UsageError) in
            guard let seconds = Double(text), seconds.isFinite, seconds >= 0.001, seconds <= 86_400 else {
                throw .invalidValue(option: "--max-time", reason: "'\(text)' is not a number of seconds from 0.001 to 86400")
            }
            return seconds
        }.last
        rules = try RulesOption.parse(&parser)
        let parts = try FetchRequest.Parts(parsing: &parser)
        var output = FetchTransfer.Options()
        output.includeHeaders = try parser.flag(anyOf: "-i", "--include")
        output.failOnHTTPError = try parser.flag(anyOf: "-f", "--fail")
        followRedirects = try parser.flag(anyOf: "-L", "--location")
        verbose = try parser.flag(anyOf: "-v", "--verbose")
        if let (_, path) = outputPath, path != "-" { output.destination = .file(path) }
        self.output = output
        let texts = parser.positionals()
        try parser.finish()
        guard let urlText = texts.first else { throw .missingArgument("URL (give the URL to fetch)") }
        if texts.count > 1 { throw .unexpectedArgument(texts[1]) }
        request = FetchRequest(url: try FetchRequest.parseURL(urlText), parts: parts)
    }

    func run() async -> ExitStatus {
        let caFile = options.caFile
        let resolver: CachingResolver
        do throws(ResolutionError) {
            resolver = try await options.makeCachingResolver().resolver
        } catch {
            Console.error("hostpin: could not resolve host \(request.url.host ?? ""): \(error)")
            return .couldNotResolve
        }
        let base = URLSessionConfiguration.ephemeral
        // curl without -b/-c: no cookie engine, no cache.
        base.httpShouldSetCookies = false
        base.httpCookieAcceptPolicy = .never
        base.httpCookieStorage = nil
        base.urlCache = nil
        base.requestCachePolicy = .reloadIgnoringLocalCacheData
        if let maxTime {
            base.timeoutIntervalForRequest = maxTime
            base.timeoutIntervalForResource = maxTime
        }
        let redirects: RedirectPolicy = followRedirects ? .follow(maxHops: Self.maxRedirects) : .doNotFollow
        // libcurl for plain HTTP too: curl-like, flow-controlled (a large body cannot pile up in memory)
        // and twice as fast as the inner URLSession.
        let configuration = URLSessionConfiguration.pinned(resolver: resolver, family: options.family,
                                                           extraCAFile: caFile, redirects: redirects,
                                                           plainHTTP: .libcurl, rules: rules,
                                                           observer: verbose ? Self.printEvent : nil, base: base)
        // A request a pass rule decides never reaches the interceptor, so no event will tell of it.
        if verbose, case .pass(.rule(let rule)) = rules.decide(PolicyRequest(method: request.method, url: request.url)) {
            VerboseEvent.lines(passedBy: rule, url: request.url).forEach(Console.error)
        }
        let transfer = FetchTransfer(options: output)
        let session = URLSession(configuration: configuration, delegate: transfer, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: request.urlRequest(timeout: maxTime))
        let outcome = await transfer.run(task, maxTime: maxTime.map { .milliseconds(Int64(($0 * 1000).rounded())) })
        let (status, sentence) = FetchFailure.report(outcome, url: request.url, maxTime: maxTime)
        if let sentence { Console.error("hostpin: \(sentence)") }
        return status
    }

    /// `-v`: the event on standard error, before the transfer's own end is reported.
    @Sendable static func printEvent(_ event: PinnedURLProtocol.Event) {
        VerboseEvent.lines(for: event).forEach(Console.error)
    }

    /// A `--ca-file` without a PEM certificate ends fetch as it ends curl: its sentence and exit 77.
    static func report(_ error: UsageError) -> ExitStatus? {
        guard case .caFile(let problem) = error else { return nil }
        Console.error("hostpin: \(problem)")
        return .caFileProblem
    }
}
