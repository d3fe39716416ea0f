import Foundation
import HostPin

/// The cache options of the commands that keep a cache (`--cache-file`, `--max-stale`,
/// `--stale-answer-timeout`, the clamps of ``CacheLimitOptions``, and for the long-running ones
/// `--preresolve`), parsed in one place, and what
/// they do at start and at exit.
public struct CacheOptions: Sendable {
    /// `--cache-file FILE`: loaded at start, written every ``savePeriod`` and at a clean exit.
    public var cacheFile: String?
    /// `--max-stale SECONDS`: how long an expired answer may be served stale; 0 turns serve-stale off.
    public var maximumStale: UInt32
    /// `--stale-answer-timeout SECONDS`: how long a caller waits for the upstreams before an expired answer
    /// is served stale (RFC 8767 §5's client response timer); 0 serves it at once.
    public var staleAnswerTimeout: Duration
    /// `--preresolve FILE`: names resolved into the cache before the command starts serving.
    public var preresolve: [HostName]
    /// `--cache-size`, `--min-ttl`, `--max-ttl`, `--max-negative-ttl`, `--refresh-ahead`.
    public var limits: CacheLimitOptions

    /// No cache file, nothing pre-resolved, the library's serve-stale defaults and `limits`.
    public init(cacheFile: String? = nil, maximumStale: UInt32 = Self.defaultMaximumStale,
                staleAnswerTimeout: Duration = Self.defaultStaleAnswerTimeout, preresolve: [HostName] = [],
                limits: CacheLimitOptions = .init()) {
        self.cacheFile = cacheFile
        self.maximumStale = maximumStale
        self.staleAnswerTimeout = staleAnswerTimeout
        self.preresolve = preresolve
        self.limits = limits
    }

    /// `--max-stale` when not given: the library's default (one day).
    public static let defaultMaximumStale = ResolutionCache.Policy().maximumStale
    /// The range `--max-stale` accepts: up to a year.
    package static let maximumStaleRange: ClosedRange<UInt32> = 0...31_536_000
    /// `--stale-answer-timeout` when not given: the library's default (1.8 s, as RFC 8767 §5 suggests).
    public static let defaultStaleAnswerTimeout = ResolutionCache.Policy().staleAnswerTimeout
    /// The most `--stale-answer-timeout` accepts, seconds (as `--timeout`).
    package static let staleAnswerTimeoutLimit = 3600.0
    /// How often a long-running command writes its cache file.
    package static let savePeriod: Duration = .seconds(300)
    /// The largest `--preresolve` file read.
    package static let preresolveLimit = 16 << 20

    /// The help lines for these options; `preresolve` adds `--preresolve`.
    package static func helpLines(preresolve: Bool, width: Int) -> String {
        let indent = String(repeating: " ", count: width + 2)
        // A name too long for the column goes on a line of its own, as the upstream options' do.
        func option(_ name: String) -> String {
            name.count < width ? "  " + name.padding(toLength: width, withPad: " ", startingAt: 0) : "  \(name)\n" + indent
        }
        var lines = [
            option("--cache-file FILE") + "Start with the answers saved in FILE and save them there again"
                + (preresolve ? " every \(Int(savePeriod.components.seconds / 60)) minutes and" : "") + " at exit",
            indent + "(written whole to a temporary file, then renamed). Entries past their TTL come",
            indent + "back stale; a damaged or foreign FILE is reported, kept as FILE.bad, and the",
            indent + "cache starts empty.",
            option("--max-stale SECONDS") + "Serve an expired answer, marked stale with TTL 30, for up to SECONDS after",
            indent + "its TTL when no upstream answers (RFC 8767; default \(defaultMaximumStale), one day; 0 never).",
            option("--stale-answer-timeout SECONDS") + "When an answer has expired but may be served stale, wait at most SECONDS",
            indent + "for the upstreams, then answer stale (TTL 30) while the query goes on and",
            indent + "updates the cache (RFC 8767 client response timer; fractions allowed,",
            indent + "0-\(Int(staleAnswerTimeoutLimit)), default \(seconds(defaultStaleAnswerTimeout)); 0 answers stale at once).",
        ] + CacheLimitOptions.helpLines(longRunning: preresolve, width: width)
        if preresolve {
            lines += [
                option("--preresolve FILE") + "Resolve the names in FILE (one per line; # comments) into the cache",
                indent + "before serving, so their first use sends no query (replaces cache.preresolve).",
            ]
        }
        return lines.joined(separator: "\n")
    }

    /// `duration` in seconds as the help text writes it: `1.8`, `0.3`, `2`.
    private static func seconds(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000)" : "\(Double(milliseconds) / 1000)"
    }

    /// `duration` in seconds, to the millisecond (the configuration file's `cache.staleAnswerTimeout`).
    package static func staleAnswerTimeoutSeconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000) / 1000
    }

    /// Takes `--cache-file`, `--max-stale`, `--stale-answer-timeout`, the ``CacheLimitOptions`` and, when
    /// `acceptsPreresolve` (the long-running commands), `--preresolve` from `parser`. The `--preresolve`
    /// file is read now: an unreadable file or an invalid name in it is a usage error; without one, the
    /// configuration file's `cache.preresolve` names.
    package init(parsing parser: inout OptionParser, acceptsPreresolve: Bool) throws(UsageError) {
        cacheFile = try parser.values("--cache-file") { path throws(UsageError) in
            guard !path.isEmpty else { throw .invalidValue(option: "--cache-file", reason: "the file name is empty") }
            return path
        }.last
        maximumStale = try parser.values("--max-stale") { text throws(UsageError) in
            guard text.allSatisfy(\.isASCII), let seconds = UInt32(text), Self.maximumStaleRange.contains(seconds) else {
                throw .invalidValue(option: "--max-stale",
                                    reason: "'\(text)' is not a whole number of seconds from 0 to \(Self.maximumStaleRange.upperBound)")
            }
            return seconds
        }.last ?? Self.defaultMaximumStale
        staleAnswerTimeout = try parser.values("--stale-answer-timeout") { text throws(UsageError) -> Duration in
            guard let seconds = Double(text), seconds.isFinite, seconds >= 0, seconds <= Self.staleAnswerTimeoutLimit else {
                throw .invalidValue(option: "--stale-answer-timeout",
                                    reason: "'\(text)' is not a number of seconds from 0 to \(Int(Self.staleAnswerTimeoutLimit))")
            }
            return .milliseconds(Int64((seconds * 1000).rounded()))
        }.last ?? Self.defaultStaleAnswerTimeout
        limits = try CacheLimitOptions(parsing: &parser, longRunning: acceptsPreresolve)
        if acceptsPreresolve, let path = try parser.values("--preresolve", { $0 }).last {
            preresolve = try Self.names(in: path)
        } else {
            preresolve = acceptsPreresolve ? parser.takeDefaultPreresolve() ?? [] : []
        }
    }

    /// The names of a `--preresolve` file: one per line, blanks around it, blank lines and lines
    /// starting with `#` ignored; repeats once.
    private static func names(in path: String) throws(UsageError) -> [HostName] {
        try InputFile.checkReadable(path, option: "--preresolve")
        let text: String
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            if let size = attributes[.size] as? Int, size > preresolveLimit {
                throw UsageError.unreadableFile(option: "--preresolve", path: path,
                                                reason: "it is larger than \(preresolveLimit >> 20) MiB")
            }
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch let error as UsageError {
            throw error
        } catch {
            throw .unreadableFile(option: "--preresolve", path: path, reason: "it is not UTF-8 text")
        }
        var names: [HostName] = []
        var seen = Set<HostName>()
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let entry = line.trimmingCharacters(in: .whitespaces)
            guard !entry.isEmpty, !entry.hasPrefix("#") else { continue }
            do throws(ResolutionError) {
                let name = try HostName.parse(entry)
                if seen.insert(name).inserted { names.append(name) }
            } catch {
                let reason = if case .badName(_, let problem) = error { "\(problem)" } else { error.description }
                throw .invalidValue(option: "--preresolve",
                                    reason: "line \(number + 1) of \(path): '\(entry)' is not a valid host name: \(reason)")
            }
        }
        return names
    }

    /// The cache these options ask for, holding at most `maximumEntries` answers (`--cache-size` when
    /// `nil`).
    ///
    /// - Parameter refreshAhead: Refresh entries used late in their TTL in the background (`--refresh-ahead`,
    ///   by default 0.8 of it): for commands that keep running; a one-shot command asks again only once an
    ///   answer has expired.
    package func makeCache(maximumEntries: Int? = nil, refreshAhead: Bool) -> ResolutionCache {
        var limits = limits.limits
        if let maximumEntries { limits.maximumEntries = maximumEntries }
        return ResolutionCache(limits: limits, policy: policy(refreshAhead: refreshAhead))
    }

    /// The serve-stale and refresh-ahead settings these options ask for.
    package func policy(refreshAhead: Bool) -> ResolutionCache.Policy {
        var policy = ResolutionCache.Policy(maximumStale: maximumStale, staleAnswerTimeout: staleAnswerTimeout)
        policy.refreshAhead = refreshAhead ? limits.refreshAhead : 0
        return policy
    }

    /// Loads the cache file into `resolver`'s cache (a damaged one is reported in one line, kept aside as
    /// FILE.bad, and the cache starts empty), then pre-resolves the `--preresolve` names for `family`.
    ///
    /// - Parameter periodicSaving: Write the cache file every ``savePeriod`` until ``CacheKeeper/finish()``.
    /// - Returns: What writes the cache file from now on; `nil` without `--cache-file`.
    package func start(_ resolver: CachingResolver, family: AddressFamily, periodicSaving: Bool, log: ServiceLog = .console) async -> CacheKeeper? {
        if let cacheFile {
            let cache = resolver.cache
            // The body throws nothing: `try?` only satisfies the signature.
            let loaded = try? await Blocking.run { () -> Result<CacheFile.LoadReport, CacheFileError> in
                do throws(CacheFileError) {
                    return .success(try CacheFile.load(from: cacheFile, into: cache))
                } catch {
                    return .failure(error)
                }
            }
            if case .failure(let error)? = loaded {
                switch error {
                case .unreadable(.missing):
                    break  // the first run: nothing saved yet
                case .foreign, .damaged, .unsupportedVersion, .unreadable:
                    let aside = cacheFile + ".bad"
                    let kept = rename(cacheFile, aside) == 0
                    log.log(.warning, "hostpin: \(cacheFile): \(error); starting with an empty cache"
                                  + (kept ? " (the file is kept as \(aside))" : ""))
                case .unwritable:
                    log.log(.warning, "hostpin: \(cacheFile): \(error); starting with an empty cache")
                }
            }
        }
        if !preresolve.isEmpty {
            let failed = await resolver.preresolve(preresolve, family: family).filter {
                if case .failure = $0 { true } else { false }
            }.count
            log.log(.info, "pre-resolved \(preresolve.count) name\(preresolve.count == 1 ? "" : "s")"
                          + (failed > 0 ? " (\(failed) failed: no upstream answered)" : ""))
        }
        guard let cacheFile else { return nil }
        return CacheKeeper(cache: resolver.cache, path: cacheFile, period: periodicSaving ? Self.savePeriod : nil, log: log)
    }
}
