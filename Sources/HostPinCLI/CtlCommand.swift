import Foundation
import HostPin
import HostPinService

/// `hostpin ctl`: asks a running `serve` or `proxy` over its control socket (`--control-socket`) to flush
/// a name or everything, or for its counters and its upstreams' health.
struct CtlCommand: Subcommand {
    static let name = "ctl"
    static let abstract = "Flush the cache, or show counters, upstream health and status, of a running serve or proxy."
    static let usage = "hostpin ctl [--control-socket PATH] [--config FILE] [--json] flush NAME|--all | stats | upstreams | status"
    static var help: String {
        """
        OVERVIEW: \(abstract)

        USAGE: \(usage)

        COMMANDS:
          flush NAME           Drop every answer cached for NAME (A, AAAA, positive and negative, and the
                               DNS stub's forwarded replies): the next query asks an upstream.
          flush --all          Drop every answer cached.
          stats                The cache's counters (entries, hits, negative hits, misses, served stale,
                               refreshes), the listeners, the number of upstreams, reloads and uptime.
          upstreams            Each trusted upstream's health: healthy, held down after failures (with
                               the time left), or probing.
          status               What the status page (http://METRICS/) shows: health, answers per second,
                               the cache's hit rate, each upstream's health, round trip and failures,
                               DNSSEC counts, the proxy's requests and refusals, and the names the
                               watch found hijacked, newest first (--json: its /status.json).

        OPTIONS:
          --control-socket PATH
                               The service's control socket (default: \(ControlSocketPath.defaultName) in the runtime
                               directory, $RUNTIME_DIRECTORY or \(ControlSocketPath.fallbackDirectory)).
        \(ConfigOption.helpLines(width: 21))
                               (Only listeners.control is used.)
          --json               Print the service's reply as it came: one line of JSON.
          -h, --help           Show this help.

        The socket is the service user's (mode 0600): run ctl as that user, or as root; the service
        refuses any other user's connection.

        EXIT STATUS:
        \(ExitStatus.success.helpLine(meaning: "done"))
        \(ExitStatus.notFound.helpLine(meaning: "the service could not be reached, or refused the request"))
        \(ExitStatus.usage.helpLine)
        """
    }

    let request: ControlRequest
    let path: String
    let json: Bool

    init(parsing parser: inout OptionParser) throws(UsageError) {
        try ConfigOption.apply(to: &parser, command: Self.name)
        path = try ControlSocketPath.option(&parser) ?? ControlSocketPath.resolve(ControlSocketPath.defaultName)
        json = try parser.flag("--json")
        let all = try parser.flag("--all")
        let words = parser.positionals()
        try parser.finish()
        guard let command = words.first else { throw .missingArgument("COMMAND (flush, stats, upstreams or status)") }
        switch command {
        case "flush":
            if all {
                if words.count > 1 { throw .conflict("flush takes a NAME or --all, not both") }
                request = .flushAll
            } else {
                guard words.count > 1 else { throw .missingArgument("NAME (or --all) for flush") }
                if words.count > 2 { throw .unexpectedArgument(words[2]) }
                request = .flush(try HostName.commandLineArgument(words[1]))
            }
        case "stats", "upstreams", "status":
            if all { throw .conflict("--all applies to flush only") }
            if words.count > 1 { throw .unexpectedArgument(words[1]) }
            request = switch command {
            case "stats": .stats
            case "upstreams": .upstreams
            default: .status
            }
        default:
            throw .invalidValue(option: "COMMAND", reason: "'\(command)' is not flush, stats, upstreams or status")
        }
    }

    func run() async -> ExitStatus {
        let (request, path) = (request, path)
        // The body throws nothing: `try?` only satisfies the signature.
        guard let reply = try? await Blocking.run({ ControlClient.send(request, to: path) }) else { return .notFound }
        switch reply {
        case .failure(let error):
            Console.error("hostpin: \(error)")
            return .notFound
        case .success(let fields):
            if json { _ = Console.out(String(decoding: JSONValue.object(fields).jsonData(), as: UTF8.self)) }
            if case .string(let error)? = fields["error"] {
                Console.error("hostpin: the service refused: \(error)")
                return .notFound
            }
            if !json { _ = Console.out(lines: ControlReplyText.lines(for: request, fields)) }
            return .success
        }
    }
}
