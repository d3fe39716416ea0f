import Foundation
import HostPin

/// Item 7: does a hot name ever wait on the network? `names` names with TTL 1 s (`r0000.refresh.test` …
/// on the benchmark's NSD) are resolved once (the warm-up: `preresolve`), then asked in a loop for
/// `seconds` by `tasks` tasks through one `CachingResolver` in front of a `TrustedResolver` (library
/// defaults but refresh-ahead, `--refresh-ahead FRACTION`; 0 turns it off). Each lookup is
/// `resolveDetailed` and is counted by the source of its answer: `cache` (answered from the cache),
/// `upstream` (the caller waited for an upstream resolution: its own or one it joined), `stale`, or a
/// failure. A wait is a lookup answered by `upstream` or failed. Each task starts at another place in the
/// list and yields every 64 lookups, as a caller doing any other work would (the pool has 2 threads
/// here: tasks that never suspend would starve the refreshes of a thread to finish on).
enum RefreshBench {
    static func run(_ options: Options) async {
        let server = options.string("server")
        let count = options.int("names", 1000)
        let tasks = options.int("tasks", 8)
        let seconds = options.double("seconds", 10)
        let fraction = options.double("refresh-ahead", 0.8)
        let id = options.string("id", "refresh")
        guard let upstream = Upstream(server) else { fail("--server \(server) is not IP:PORT") }

        let trusted: TrustedResolver
        do throws(ResolutionError) {
            // Unvalidated, as this row has always measured (the bench NSD's zone is not signed).
            var configuration = TrustedResolver.Configuration(upstreams: [upstream])
            configuration.dnssec = .off
            trusted = try TrustedResolver(configuration: configuration)
        } catch {
            fail("resolver: \(error)")
        }
        let cache = ResolutionCache(policy: ResolutionCache.Policy(refreshAhead: fraction))
        let resolver = CachingResolver(upstream: trusted, cache: cache)
        let names = (0..<count).map { try! HostName.parse(refreshName($0)) }

        let warmUp = await resolver.preresolve(names, family: .v4)
        let failures = warmUp.compactMap { result -> ResolutionError? in
            if case .failure(let error) = result { error } else { nil }
        }
        if let first = failures.first { fail("warm-up: \(failures.count) of \(count) names failed, e.g. \(first)") }
        let before = cache.statistics

        let start = nowNanoseconds()
        let end = start + UInt64(seconds * 1e9)
        let lateFrom = start + 1_000_000_000  // one TTL after the loop starts
        let tally = await withTaskGroup(of: Tally.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    await loop(resolver, names, from: task * count / max(1, tasks), until: end, lateFrom: lateFrom)
                }
            }
            return await group.reduce(into: Tally()) { $0.add($1) }
        }
        let elapsed = Double(nowNanoseconds() - start) / 1e9
        let after = cache.statistics

        report("\(id).lookups", Double(tally.lookups))
        report("\(id).lookups.per.s", Double(tally.lookups) / elapsed)
        report("\(id).waits", Double(tally.waits))
        report("\(id).waits.late", Double(tally.lateWaits))
        report("\(id).stale", Double(tally.stale))
        report("\(id).failures", Double(tally.failures))
        report("\(id).refreshes", Double(after.refreshes - before.refreshes))
        report("\(id).longest.us", Double(tally.longest) / 1000)
    }

    /// What one task saw.
    struct Tally: Sendable {
        var lookups = 0
        /// Lookups answered by an upstream resolution, or failed.
        var waits = 0
        /// Waits from one TTL (1 s) after the loop started.
        var lateWaits = 0
        var stale = 0
        var failures = 0
        /// The slowest lookup, nanoseconds.
        var longest: UInt64 = 0

        mutating func add(_ other: Tally) {
            lookups += other.lookups
            waits += other.waits
            lateWaits += other.lateWaits
            stale += other.stale
            failures += other.failures
            longest = max(longest, other.longest)
        }
    }

    /// Asks `names` in turn, starting at `first`, until `end` (monotonic nanoseconds).
    static func loop(_ resolver: CachingResolver, _ names: [HostName], from first: Int, until end: UInt64,
                     lateFrom: UInt64) async -> Tally {
        var tally = Tally()
        var index = first
        var now = nowNanoseconds()
        while now < end {
            for _ in 0..<64 {
                let name = names[index]
                index = index + 1 == names.count ? 0 : index + 1
                var waited = false
                do throws(ResolutionError) {
                    switch try await resolver.resolveDetailed(name, family: .v4).source {
                    case .cache, .negativeCache: break
                    case .stale: tally.stale += 1
                    case .upstream, .sharedCache, .literal, .specialUse, .pinned, .untrusted: waited = true
                    }
                } catch {
                    tally.failures += 1
                    waited = true
                }
                let finished = nowNanoseconds()
                tally.longest = max(tally.longest, finished - now)
                if waited {
                    tally.waits += 1
                    if now >= lateFrom { tally.lateWaits += 1 }
                }
                tally.lookups += 1
                now = finished
            }
            await Task.yield()
            now = nowNanoseconds()
        }
        return tally
    }
}

/// Names `r0000.refresh.test` … as the generated zone has them (TTL 1 s).
func refreshName(_ i: Int) -> String {
    let digits = String(i)
    return "r" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits + ".refresh.test"
}
