import HostPin

/// Per-source token buckets for ``DNSServer/RateLimit``: a pure value, kept under the server's lock.
///
/// A source is an IPv4 address or an IPv6 /64 (one host usually holds a whole /64). The table holds at
/// most `maximumSources` buckets: when it is full, buckets that have refilled completely (sources that
/// went quiet) are dropped, and if that frees less than a quarter, all are (a flood from many sources
/// then meets fresh buckets, which is still a limit per source).
struct TokenBuckets {
    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    private enum Source: Hashable {
        case v4(UInt32)
        case v6(UInt64)

        init(_ address: IPAddress) {
            let bytes = address.bytes
            switch address.family {
            case .v4: self = .v4(bytes.prefix(4).reduce(0) { $0 << 8 | UInt32($1) })
            case .v6: self = .v6(bytes.prefix(8).reduce(0) { $0 << 8 | UInt64($1) })
            }
        }
    }

    let limit: DNSServer.RateLimit
    let maximumSources: Int
    private var buckets: [Source: Bucket] = [:]

    init(limit: DNSServer.RateLimit, maximumSources: Int = 65_536) {
        self.limit = limit
        self.maximumSources = maximumSources
    }

    /// The number of sources tracked.
    var count: Int { buckets.count }

    /// Whether a query from `address` at `now` may be answered; takes one token when it may.
    mutating func admit(_ address: IPAddress, at now: ContinuousClock.Instant) -> Bool {
        let source = Source(address)
        var bucket: Bucket
        if let known = buckets[source] {
            bucket = known
            bucket.tokens = level(of: known, at: now)
            bucket.updated = now
        } else {
            if buckets.count >= maximumSources { prune(at: now) }
            bucket = Bucket(tokens: limit.burst, updated: now)
        }
        let admitted = bucket.tokens >= 1
        if admitted { bucket.tokens -= 1 }
        buckets[source] = bucket
        return admitted
    }

    private func level(of bucket: Bucket, at now: ContinuousClock.Instant) -> Double {
        let (seconds, attoseconds) = (now - bucket.updated).components
        let elapsed = max(0, Double(seconds) + Double(attoseconds) / 1e18)
        return min(limit.burst, bucket.tokens + elapsed * limit.queriesPerSecond)
    }

    private mutating func prune(at now: ContinuousClock.Instant) {
        let before = buckets.count
        buckets = buckets.filter { level(of: $0.value, at: now) < limit.burst }
        if buckets.count > before - before / 4 { buckets.removeAll() }
    }
}
