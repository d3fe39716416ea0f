import Foundation
import HostPin

/// Item 5: resident size of a process holding `names` cached names (one A record each), filled through
/// `CachingResolver.resolve` as an application would (a stub upstream answers at once). Reports VmRSS
/// before and after, and VmHWM, in KiB.
enum MemoryBench {
    static func run(_ options: Options) async {
        let count = options.int("names", 100_000)
        // The default limit is 100 000 entries: larger runs (the scaling chart) raise it to hold every name.
        let limits = ResolutionCache.Limits(maximumEntries: max(100_000, count))
        let resolver = CachingResolver(upstream: StubResolver(), cache: ResolutionCache(limits: limits))
        let before = procStatusKiB("VmRSS")
        if options.string("fill", "resolve") == "store" {
            // Profiling variant: store straight into the cache from this thread (no tasks, no flights).
            let stub = StubResolver()
            for i in 0..<count {
                let name = try! HostName.parse(benchName(i))
                resolver.cache.store(stub.answer(for: name, index: i), family: .v4)
            }
        } else {
            for i in 0..<count {
            do throws(ResolutionError) {
                _ = try await resolver.resolve(benchName(i), family: .v4)
            } catch {
                fail("resolve: \(error)")
            }
            }
        }
        guard resolver.cache.count == count else { fail("cache holds \(resolver.cache.count) of \(count)") }
        report("memory.rss.before.kib", before)
        report("memory.rss.kib", procStatusKiB("VmRSS"))
        report("memory.hwm.kib", procStatusKiB("VmHWM"))
        withExtendedLifetime(resolver) {}
    }
}
