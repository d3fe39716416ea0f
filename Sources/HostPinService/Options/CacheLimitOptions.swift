import HostPin

/// The cache's clamps and size (`--min-ttl`, `--max-ttl`, `--max-negative-ttl`, and for the long-running
/// commands `--cache-size` and `--refresh-ahead`; `lookup` takes its own `--cache-size`): the library's
/// ``ResolutionCache/Limits`` and refresh-ahead, as options (and configuration keys under `cache`).
public struct CacheLimitOptions: Sendable, Equatable {
    /// TTL clamps, negative TTL cap and entry limit, seconds and entries.
    public var limits: ResolutionCache.Limits
    /// `--refresh-ahead`: the part of an entry's lifetime after which a use refreshes it; 0 or 1 turns
    /// refresh-ahead off.
    public var refreshAhead: Double

    /// `limits` (the library's by default), refreshed ahead after `refreshAhead` of an entry's lifetime
    /// (the library's 0.8 by default).
    public init(limits: ResolutionCache.Limits = .init(), refreshAhead: Double = ResolutionCache.Policy().refreshAhead) {
        self.limits = limits
        self.refreshAhead = refreshAhead
    }

    /// `--cache-size` when not given: the library's default entry limit.
    package static let defaultMaximumEntries = ResolutionCache.Limits().maximumEntries
    /// The range `--cache-size` accepts (`lookup`'s too).
    package static let maximumEntriesRange = 0...10_000_000
    /// The range `--min-ttl` accepts: raising a TTL past a day is asking for stale answers.
    package static let minimumTTLRange: ClosedRange<UInt32> = 0...86_400
    /// The range `--max-ttl` accepts: at least a second (0 would cache nothing), at most a week.
    package static let maximumTTLRange: ClosedRange<UInt32> = 1...604_800
    /// The range `--max-negative-ttl` accepts.
    package static let maximumNegativeTTLRange: ClosedRange<UInt32> = 0...86_400

    /// Takes `--min-ttl`, `--max-ttl`, `--max-negative-ttl` and, when `longRunning`, `--cache-size` and
    /// `--refresh-ahead` from `parser`.
    ///
    /// - Throws: ``UsageError/invalidValue(option:reason:)`` for a value out of range,
    ///   ``UsageError/conflict(_:)`` for `--min-ttl` above `--max-ttl`.
    package init(parsing parser: inout OptionParser, longRunning: Bool) throws(UsageError) {
        var limits = ResolutionCache.Limits()
        if longRunning, let entries = try parser.values("--cache-size", { text throws(UsageError) in
            guard let value = Int(text), Self.maximumEntriesRange.contains(value) else {
                throw .invalidValue(option: "--cache-size",
                                    reason: "'\(text)' is not a whole number from 0 to \(Self.maximumEntriesRange.upperBound)")
            }
            return value
        }).last {
            limits.maximumEntries = entries
        }
        limits.minimumTTL = try Self.seconds(&parser, "--min-ttl", Self.minimumTTLRange) ?? limits.minimumTTL
        limits.maximumTTL = try Self.seconds(&parser, "--max-ttl", Self.maximumTTLRange) ?? limits.maximumTTL
        limits.maximumNegativeTTL = try Self.seconds(&parser, "--max-negative-ttl", Self.maximumNegativeTTLRange)
            ?? limits.maximumNegativeTTL
        guard limits.minimumTTL <= limits.maximumTTL else {
            throw .conflict("--min-ttl \(limits.minimumTTL) is above --max-ttl \(limits.maximumTTL)")
        }
        self.limits = limits
        refreshAhead = try longRunning ? parser.values("--refresh-ahead") { text throws(UsageError) in
            guard let fraction = Double(text), fraction.isFinite, (0...1).contains(fraction) else {
                throw .invalidValue(option: "--refresh-ahead", reason: "'\(text)' is not a fraction from 0 to 1")
            }
            return fraction
        }.last ?? ResolutionCache.Policy().refreshAhead : 0
    }

    private static func seconds(_ parser: inout OptionParser, _ option: String, _ range: ClosedRange<UInt32>)
        throws(UsageError) -> UInt32?
    {
        try parser.values(option) { text throws(UsageError) in
            guard text.allSatisfy(\.isASCII), let seconds = UInt32(text), range.contains(seconds) else {
                throw .invalidValue(option: option,
                                    reason: "'\(text)' is not a whole number of seconds from \(range.lowerBound) to \(range.upperBound)")
            }
            return seconds
        }.last
    }

    /// The help lines; `longRunning` adds `--cache-size` and `--refresh-ahead`. An option name as wide as
    /// `width` or wider has its text on the lines below it.
    package static func helpLines(longRunning: Bool, width: Int) -> [String] {
        let indent = String(repeating: " ", count: width + 2)
        func entry(_ name: String, _ text: String...) -> [String] {
            let head = "  " + name
            guard head.count < width + 2 else { return [head] + text.map { indent + $0 } }
            return [head.padding(toLength: width + 2, withPad: " ", startingAt: 0) + text[0]] + text.dropFirst().map { indent + $0 }
        }
        let defaults = ResolutionCache.Limits()
        var lines: [String] = []
        if longRunning {
            lines += entry("--cache-size N", "Keep at most N answers (0-\(maximumEntriesRange.upperBound), default \(defaultMaximumEntries)); when",
                           "full, an expired answer goes first, else the least recently used.")
        }
        lines += entry("--min-ttl SECONDS", "Keep an answer at least this long, whatever its TTL (default \(defaults.minimumTTL);",
                       "a TTL of 0 is never cached).")
        lines += entry("--max-ttl SECONDS", "Keep an answer at most this long (default \(defaults.maximumTTL), one day).")
        lines += entry("--max-negative-ttl SECONDS", "Keep NXDOMAIN and NODATA at most this long (RFC 2308; default \(defaults.maximumNegativeTTL)).")
        if longRunning {
            lines += entry("--refresh-ahead FRACTION", "Refresh an answer used after this part of its TTL, in the background",
                           "(default \(ResolutionCache.Policy().refreshAhead); 0 or 1 turns refresh-ahead off).")
        }
        return lines
    }
}
