import HostPin
import HostPinService

/// `hostpin lookup NAME...` and `hostpin lookup --batch FILE|-`: resolves names through the trusted
/// upstreams only and prints dig-style answer lines or JSON Lines.
struct LookupCommand: Subcommand {
    static let name = "lookup"
    static let abstract = "Resolve names through trusted upstreams only; print dig-style answers."
    static let usage = "hostpin lookup NAME... | --batch FILE|- [--config FILE] [--concurrency N] [--server IP:PORT|URL]... "
        + "[--bootstrap NAME=IP[,IP...]]... [--pin NAME=sha256//BASE64]... [--ca-file FILE] "
        + "[--dnssec validate|report|off] [--trust-anchor FILE]... [--insecure-domain NAME]... [--route DOMAIN=UPSTREAM[,UPSTREAM...]]... [--family 4|6|any] "
        + "[--timeout SECONDS] [--tcp] [--cache-size N] [--cache-file FILE] [--max-stale SECONDS] [--min-ttl SECONDS] "
        + "[--max-ttl SECONDS] [--max-negative-ttl SECONDS] [--stale-answer-timeout SECONDS] [--json]"
    /// `--concurrency` when not given.
    static let defaultConcurrency = 64
    /// The range `--concurrency` accepts.
    static let concurrencyRange = 1...10_000
    /// `--cache-size` when not given: the library's default entry limit.
    static let defaultCacheSize = ResolutionCache.Limits().maximumEntries
    /// The range `--cache-size` accepts.
    static let cacheSizeRange = 0...10_000_000

    static var help: String {
        """
        OVERVIEW: \(abstract)

        USAGE: \(usage)

        ARGUMENTS:
          NAME                 A host name (Unicode names are converted to A-labels) or an IP literal.
                               An invalid NAME is a usage error (exit 2) and nothing is resolved.

        OPTIONS:
        \(ConfigOption.helpLines(width: 21))
          --batch FILE|-       Read the names from FILE (- for standard input) instead of the arguments:
                               one name per line; blanks around it, blank lines and lines starting with
                               # are ignored. The file is read as it goes, never held whole. A line that
                               is not a valid name gets its error (exit 2 counts as for any name) and the
                               batch goes on. Answers are cached as for arguments (see --cache-size).
          --concurrency N      Resolve at most N names at once (1-\(concurrencyRange.upperBound), default \(defaultConcurrency));
                               more in flight would overflow the socket's receive buffer and time
                               out for nothing.
        \(TrustedOptions.helpLines)
          --tcp                Send every plain DNS query over TCP (DoH and DoT always run over TCP).
          --cache-size N       Keep at most N answers, each for its TTL (0-\(cacheSizeRange.upperBound), default \(defaultCacheSize)).
                               A name asked again while its answer is cached, or while it is being
                               resolved, sends no query; NXDOMAIN and NODATA are cached for their
                               zone's negative TTL (at most 900 s). When full, an expired answer goes
                               first, else the least recently used one, so an endless --batch runs
                               in bounded memory. 0 caches nothing.
        \(CacheOptions.helpLines(preresolve: false, width: 21))
          --json               Print one JSON object per name per line (JSON Lines).
          -h, --help           Show this help.

        OUTPUT:
          Names are printed in input order, each as soon as it and every name before it are done: one
          that waits (up to --timeout) holds back at most N-1 finished ones behind it, and no new name
          starts while it does, so at most N answers are ever held.
          One line per record, as `dig +noall +answer` prints them, CNAMEs first:
            alias.example.test. 5 IN CNAME www.example.test.
            www.example.test. 3600 IN A 127.0.0.10
          A cached answer's TTLs are what is left of them (as dig shows a caching resolver's).
          An expired answer served because no upstream answered ends each line with `; stale`.
          A validated answer (--dnssec validate or report) ends with one line saying what DNSSEC
          found, as delv prints `; fully validated`: `; secure`, `; insecure` (a signed proof that the
          zone is unsigned, or an --insecure-domain), `; indeterminate` (no trust anchor covers it), or,
          in report mode, `; bogus (report mode): REASON`; none with --dnssec off. A bogus answer in
          validate mode is a failure (exit 3) whose sentence gives the reason.
          A name that fails prints one sentence to standard error: `hostpin: <reason>`, which starts
          with the name (`nx.example.test: NXDOMAIN ...`, `www.example.test: no trusted upstream
          answered: ...`).
          With --json: {name, addresses: [{address, family, ttl}], cnames: [{alias, target, ttl}],
          dnssec (secure, insecure, indeterminate or bogus, with dnssecReason; null when not
          validated), ttl, upstream, source, receivedAt (RFC 3339, UTC; a cached answer's original
          time, while its TTLs are what is left)} or, for a failure, {name, error, code, source} (and
          the sentence on standard error; with dnssec when validated: a validated NXDOMAIN or NODATA,
          or a bogus answer, code dnssec_bogus); a failure's source is where it came from:
          upstream or negativeCache (NXDOMAIN, NODATA), upstream (no answer), or null (nothing was
          asked: an invalid name). The exit status is the highest of 3, 2 and 1 that any name ended
          with.
          With --batch, when standard error is a terminal (never otherwise), a progress line at its
          bottom, redrawn at most 4 times a second, and left as the last line at the end:
            hostpin: 1200 names done, 1190 answered, 10 failed, 850 names/s, 0:12 left
          (failed: NXDOMAIN, NODATA, no answer or an invalid line; the time left only when FILE is
          a regular file, from the part of it read).

        \(UpstreamSelection.helpSection)

        EXIT STATUS:
        \([ExitStatus.success, .notFound, .usage, .upstreamFailure].map(\.helpLine).joined(separator: "\n"))
        """
    }

    /// The names to resolve.
    let source: NameSource
    /// `--concurrency`: the most resolutions in flight (and answers held for ordering).
    let concurrency: Int
    /// `--server`, `--bootstrap`, `--pin`, `--ca-file`, `--family`, `--timeout`.
    let options: TrustedOptions
    /// `--tcp`.
    let useTCP: Bool
    /// `--cache-size`: the most answers cached.
    let cacheSize: Int
    /// `--json`.
    let json: Bool
    /// `--cache-file`, `--max-stale`, `--stale-answer-timeout`.
    let cacheOptions: CacheOptions

    init(parsing parser: inout OptionParser) throws(UsageError) {
        try ConfigOption.apply(to: &parser, command: Self.name)
        json = try parser.flag("--json")
        useTCP = try parser.flag("--tcp")
        options = try TrustedOptions(parsing: &parser)
        let batch = try parser.values("--batch") { $0 }.last
        concurrency = try parser.values("--concurrency") { text throws(UsageError) in
            guard let value = Int(text), Self.concurrencyRange.contains(value) else {
                throw .invalidValue(option: "--concurrency",
                                    reason: "'\(text)' is not a whole number from 1 to \(Self.concurrencyRange.upperBound)")
            }
            return value
        }.last ?? Self.defaultConcurrency
        cacheSize = try parser.values("--cache-size") { text throws(UsageError) in
            guard let value = Int(text), Self.cacheSizeRange.contains(value) else {
                throw .invalidValue(option: "--cache-size",
                                    reason: "'\(text)' is not a whole number from 0 to \(Self.cacheSizeRange.upperBound)")
            }
            return value
        }.last ?? Self.defaultCacheSize
        cacheOptions = try CacheOptions(parsing: &parser, acceptsPreresolve: false)
        let texts = parser.positionals()
        try parser.finish()
        source = try NameSource(batch: batch, arguments: texts, missing: "NAME (give at least one host name, or --batch FILE)")
    }

    func run() async -> ExitStatus {
        // Many lines: written in 64 KiB pieces rather than one write(2) each (still within 50 ms).
        Console.bufferOutput()
        let feed = source.feed
        let resolver: Result<CachingResolver, ResolutionError>
        var keeper: CacheKeeper?
        do throws(ResolutionError) {
            // The entry limit keeps an endless batch in bounded memory.
            let chain = try await options.makeCachingResolver(useTCP: useTCP, cache: cacheOptions, maximumEntries: cacheSize)
            keeper = chain.keeper
            resolver = .success(chain.resolver)
        } catch {
            // No resolver, no answers: every name reports the setup failure, so JSON stays one line per name.
            resolver = .failure(error)
        }
        // The progress line: for --batch on a terminal only (README.md, "The CLI").
        var progress = source.position.flatMap { Console.standardErrorIsTerminal ? BatchProgress(position: $0) : nil }
        let status = await Self.resolveInOrder(feed, concurrency: concurrency, resolver: resolver, family: options.family) {
            finished in
            let status = self.report(finished)
            progress?.record(status)
            return status
        }
        progress?.finish()
        await keeper?.finish()
        return status
    }

    /// A name's end, ready to print.
    enum Finished: Sendable {
        /// The outcome for the name as given.
        case outcome(Result<ResolutionOutcome, ResolutionError>, name: String)
        /// The input could not be read further: the sentence.
        case unreadable(String)
    }

    /// Prints one finished name and returns its exit status.
    private func report(_ finished: Finished) -> ExitStatus {
        switch finished {
        case .outcome(let outcome, let name):
            if json {
                Console.out { bytes in
                    JSONLinesFormatter.appendLine(for: outcome, nameText: name, to: &bytes)
                    bytes.append(UInt8(ascii: "\n"))
                }
            }
            switch outcome.flatMap(\.addresses) {
            case .success(let resolution):
                // A cached answer shows what is left of its TTLs, as dig against a caching resolver would.
                let age = (try? outcome.get())?.age ?? 0
                if !json { Console.out(lines: DigFormatter.lines(for: resolution, age: age)) }
                return .success
            case .failure(let error):
                Console.error("hostpin: \(error.sentence(about: name))")
                return error.lookupExitStatus
            }
        case .unreadable(let sentence):
            Console.error("hostpin: \(sentence)")
            return .usage
        }
    }

    private enum Event: Sendable {
        /// Outcomes are waiting in the mailbox.
        case resolved
        case read([LookupEntry])
    }

    /// Takes entries from `feed` and resolves them with at most `concurrency` in flight, handing each to
    /// `report` in input order as soon as it and all before it are done; returns the worst status
    /// `report` gave (``worse(_:_:)``).
    ///
    /// The window is input-ordered: entry *i* starts only once entry *i − concurrency* has been reported, so
    /// at most `concurrency` entries are in flight or held finished at any time, and the feed is read no
    /// further ahead than that. Reading is a child task, so finished names are printed while a slow pipe is
    /// waited for; while names are in flight, the next read waits until an eighth of the window is free, so
    /// that a full window costs one read (and its task) per few names rather than one per name. The names
    /// are resolved through one ``BatchResolution`` (`CachingResolver.resolveMany`): no task and no
    /// continuation per name; outcomes come back through an ``OutcomeMailbox``, whose first outcome of a
    /// batch wakes this loop through the `AsyncStream` it reads (docs/ARCHITECTURE.md, "Bulk lookups").
    /// Without a resolver (`resolver` a failure), every name ends with that failure. Once standard output
    /// fails, nothing new starts and no name is waited for.
    static func resolveInOrder(
        _ feed: any LookupFeed, concurrency: Int, resolver: Result<CachingResolver, ResolutionError>,
        family: AddressFamily, report: (Finished) -> ExitStatus
    ) async -> ExitStatus {
        let (events, sink) = AsyncStream.makeStream(of: Event.self)
        let mailbox = OutcomeMailbox()
        let batch = try? resolver.get().resolveMany(family: family, concurrency: concurrency) { index, outcome in
            if mailbox.post(index, outcome: outcome) { BatchResolution.afterDeliveries { sink.yield(.resolved) } }
        }
        // Discarding: the group keeps no record of a finished child (the reads would pile up until the end).
        return await withDiscardingTaskGroup { group in
            var status = ExitStatus.success
            var nextToStart = 0
            var nextToReport = 0
            var inFlight: [Int: String] = [:]
            var finished: [Int: Finished] = [:]
            var reading = false
            var exhausted = false
            var stopped = false
            var iterator = events.makeAsyncIterator()
            var deliveries: [OutcomeMailbox.Delivery] = []
            let readAhead = max(1, concurrency / 8)
            while true {
                let room = concurrency - (nextToStart - nextToReport)
                if !reading, !exhausted, room > 0, room >= readAhead || inFlight.isEmpty {
                    reading = true
                    group.addTask { sink.yield(.read(await feed.take(upTo: room))) }
                }
                // Nothing being read or resolved: every entry has been reported.
                guard reading || !inFlight.isEmpty, let event = await iterator.next() else { break }
                switch event {
                case .read(let entries):
                    reading = false
                    if entries.isEmpty || exhausted { exhausted = true }
                    // Handed to the batch together: its misses go to the upstream in one block.
                    var names: [(name: HostName, tag: Int)] = []
                    defer { if !names.isEmpty { batch?.submit(contentsOf: names) } }
                    for entry in entries where !exhausted {
                        let index = nextToStart
                        nextToStart += 1
                        switch entry {
                        case .name(let name):
                            switch resolver {
                            case .success:
                                inFlight[index] = name.text
                                names.append((name, index))
                            case .failure(let error):
                                finished[index] = .outcome(.failure(error), name: name.text)
                            }
                        case .invalid(let text, let problem):
                            finished[index] = .outcome(.failure(.badName(text, problem)), name: text)
                        case .unreadable(let sentence):
                            finished[index] = .unreadable(sentence)
                            exhausted = true
                        }
                    }
                case .resolved:
                    mailbox.takeAll(into: &deliveries)
                    for (index, outcome) in deliveries {
                        finished[index] = .outcome(outcome, name: inFlight.removeValue(forKey: index) ?? "")
                    }
                }
                while let next = finished.removeValue(forKey: nextToReport) {
                    nextToReport += 1
                    if !Console.outputFailed { status = worse(status, report(next)) }
                }
                // Checked after every event, not only after a report: the delayed flush finds a failed
                // write too, after the report that made it returned.
                if Console.outputFailed, !stopped {
                    stopped = true
                    exhausted = true
                    // Nothing will be printed: no name waits for its outcome, and none starts.
                    batch?.stop()
                    inFlight = [:]
                    group.cancelAll()
                }
            }
            sink.finish()
            return status
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
                 .tlsHandshakeFailed, .tooManyRedirects, .blocked, .certificateUntrusted, .caFileProblem: 3
            }
        }
        return rank(b) > rank(a) ? b : a
    }
}
