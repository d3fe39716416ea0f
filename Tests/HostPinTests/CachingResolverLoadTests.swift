import Foundation
import HostPin
import HostPinTestSupport
import Synchronization
import Testing

/// `CachingResolver` under load: 10 000 callers at once, each resolving one of 100 names with TTL 1 after
/// another for 5 s, against an NSD of the test's own that gives each name a zone of its own, so NSD counts
/// the upstream queries per name (`zonestats`).
///
/// What must hold, and why the bounds are what they are:
/// - every call completes exactly once, with its name's address (a call id per call, its completions
///   counted);
/// - per name, upstream resolutions never overlap (single-flight: a refresh and a miss share one
///   flight), and the next starts only after the previous answer was stored: a miss once it expired
///   (TTL after the store), a refresh once it was used after `refreshAhead` of its lifetime. So starts
///   are at least `refreshAhead × TTL` apart (TTL with refresh-ahead off), and over a run of D seconds a
///   name gets at most ⌊D / gap⌋ + 1 queries;
/// - a miss needs the entry expired, so misses are at least a TTL apart: at most one per TTL window, and
///   a run of D seconds touches at most ⌈D / TTL⌉ + 1 windows (one more for the edges). Over all names,
///   the queries NSD counted less the refreshes the cache counted are at most that many per name.
///
/// D is measured from before the first call to after the last completion, which covers every query's
/// start; the gap is taken 10 ms short for the coarse monotonic clock (a few milliseconds per tick).
@Suite(.serialized) struct CachingResolverLoadTests {
    static let nameCount = 100
    static let callers = 10_000
    static let duration: Duration = .seconds(5)

    /// Name `index`: `n07.load.test`, a zone of its own whose apex has A 127.0.1.`index + 1`, TTL 1.
    static func name(_ index: Int) -> String { "n" + (index < 10 ? "0" : "") + "\(index).load.test" }

    static func zones() -> [AuthoritativeServer.Zone] {
        (0..<nameCount).map { index in
            AuthoritativeServer.Zone(name: name(index), text: """
                $ORIGIN \(name(index)).
                $TTL 1
                @ 1 IN SOA ns.load.test. hostmaster.load.test. 1 3600 600 86400 1
                @ 1 IN NS ns.load.test.
                @ 1 IN A 127.0.1.\(index + 1)

                """)
        }
    }

    @Test(.timeLimit(.minutes(5)), arguments: [0.8, 0])
    func tenThousandConcurrentCallersOverHundredNamesWithTTLOne(refreshAhead: Double) async throws {
        let server = try await AuthoritativeServer(zones: Self.zones(), readinessName: Self.name(0))
        var configuration = TrustedResolver.Configuration.ownServer([server.address])  // unsigned zone of its own
        // c-ares asks again only after 2 s of silence (a retry would be a second query at NSD); the budget
        // leaves room for a machine that the 10 000 callers keep busy.
        configuration.timeout = .seconds(2)
        configuration.budget = .seconds(20)
        let cache = ResolutionCache(policy: ResolutionCache.Policy(refreshAhead: refreshAhead))
        let resolver = CachingResolver(upstream: try TrustedResolver(configuration: configuration), cache: cache)
        let names = try (0..<Self.nameCount).map { try HostName.parse(Self.name($0)) }
        let before = try await server.queriesPerZone()

        let ledger = CallLedger()
        let clock = ContinuousClock()
        let start = clock.now
        let end = start + Self.duration
        let tallies = await withTaskGroup(of: CallerTally.self) { group in
            for caller in 0..<Self.callers {
                group.addTask {
                    var tally = CallerTally()
                    var turn = caller
                    while clock.now < end {
                        let index = turn % Self.nameCount
                        turn += 1
                        let id = ledger.start()
                        do throws(ResolutionError) {
                            let resolution = try await resolver.resolve(names[index], family: .v4)
                            if resolution.ipAddresses.map(\.description) != ["127.0.1.\(index + 1)"] {
                                tally.wrong.append("\(names[index]): \(resolution.ipAddresses)")
                            }
                        } catch {
                            tally.failures.append("\(names[index]): \(error)")
                        }
                        ledger.complete(id)
                        tally.calls += 1
                        // A hit does not suspend: yield, so that every caller runs, and the refreshes too.
                        await Task.yield()
                    }
                    return tally
                }
            }
            var total = CallerTally()
            for await tally in group { total.add(tally) }
            return total
        }
        let elapsed = clock.now - start
        let after = try await server.queriesPerZone()
        let refreshes = resolver.cache.statistics.refreshes

        // Every call completed exactly once, with the right address.
        let (calls, notOnce) = ledger.summary()
        #expect(calls == tallies.calls)
        #expect(notOnce == 0, "\(notOnce) calls completed other than once")
        #expect(tallies.failures.isEmpty, "\(tallies.failures.count) failed: \(tallies.failures.prefix(5))")
        #expect(tallies.wrong.isEmpty, "\(tallies.wrong.count) wrong: \(tallies.wrong.prefix(5))")

        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        let perName = (0..<Self.nameCount).map { (after[Self.name($0)] ?? 0) - (before[Self.name($0)] ?? 0) }
        let total = perName.reduce(0, +)
        let gap = (refreshAhead > 0 ? refreshAhead : 1) - 0.01
        let perNameBound = Int((seconds / gap).rounded(.down)) + 1
        let windows = Int(seconds.rounded(.up)) + 1
        #expect(perName.allSatisfy { $0 >= 1 })
        #expect(perName.max()! <= perNameBound, "per name: \(perName)")
        #expect(total - refreshes <= Self.nameCount * windows, "\(total) queries, \(refreshes) refreshes")
        if refreshAhead == 0 { #expect(refreshes == 0) }
        print("load (refresh-ahead \(refreshAhead)): \(calls) calls by \(Self.callers) callers over \(Self.nameCount) names "
              + "in \(String(format: "%.2f", seconds)) s; NSD counted \(total) upstream queries (per name \(perName.min()!)-"
              + "\(perName.max()!), bound \(perNameBound)); \(refreshes) refreshes; misses at most "
              + "\(Self.nameCount) × \(windows) TTL windows")
    }
}

/// One caller's calls, and what went wrong in them.
private struct CallerTally: Sendable {
    var calls = 0
    var failures: [String] = []
    var wrong: [String] = []

    mutating func add(_ other: CallerTally) {
        calls += other.calls
        failures += other.failures
        wrong += other.wrong
    }
}

/// Completions per call id: ``start()`` gives a call its id, ``complete(_:)`` counts one completion.
private final class CallLedger: Sendable {
    private let completions = Mutex<[UInt8]>([])

    func start() -> Int {
        completions.withLock { completions in
            completions.append(0)
            return completions.count - 1
        }
    }

    func complete(_ id: Int) {
        completions.withLock { $0[id] &+= 1 }
    }

    /// Calls started, and how many of them completed other than exactly once.
    func summary() -> (calls: Int, notOnce: Int) {
        completions.withLock { completions in (completions.count, completions.count { $0 != 1 }) }
    }
}
