import Foundation
import HostPin
import Synchronization

/// Item 1: cache hits in process. Already-normalised `HostName`s; 16 hot keys or random keys over
/// `keys` cached names; the synchronous `ResolutionCache.lookup` and the async `CachingResolver.resolve`
/// separately; 1 and 2 threads. Each lookup returns the addresses a caller can use (a `Resolution`), and
/// the bench counts them. Reports nanoseconds per lookup as seen by one thread (wall time / lookups per
/// thread), so with 2 threads the number includes whatever the threads share in the cache. Each thread
/// asks with names of its own (parsed again from the text, so their storage is its own, as two callers'
/// names would be): threads copying names out of one shared array would fight over those names'
/// reference counts, which measures the bench, not the cache.
enum CacheBench {
    static func run(_ options: Options) async {
        let keys = options.int("keys", 100_000)
        let opsHot = options.int("ops-hot", 2_000_000)
        let opsRandom = options.int("ops-random", 1_000_000)

        let stub = StubResolver()
        // The default limit is 100 000 entries: larger runs (the scaling chart) raise it to hold every key.
        let limits = ResolutionCache.Limits(maximumEntries: max(100_000, keys))
        let resolver = CachingResolver(upstream: stub, cache: ResolutionCache(limits: limits))
        var names: [HostName] = []
        names.reserveCapacity(keys)
        for i in 0..<keys {
            let name = try! HostName.parse(benchName(i))
            names.append(name)
            resolver.cache.store(stub.answer(for: name, index: i), family: .v4)
        }
        guard resolver.cache.count == keys else { fail("cache holds \(resolver.cache.count) of \(keys) names") }
        let hot = Array(names.prefix(16))
        let all = names
        // --only ID runs one measurement (for profiling), e.g. --only cache.sync.hot.t1
        let only = options.string("only", "")
        func wanted(_ id: String) -> Bool { only.isEmpty || only == id }

        // Issue 29: a hit with 100 routes (split DNS) configured against one with none, both behind a real
        // TrustedResolver (whose upstreams are never asked: every lookup is a hit), hot keys, 1 thread.
        for routes in [0, 100] {
            let id = "cache.async.hot.t1.routes\(routes)"
            guard wanted(id) else { continue }
            var configuration = TrustedResolver.Configuration(upstreams: [Upstream("127.0.0.1:9")!])
            configuration.dnssec = .off
            configuration.routes = try! RouteTable((0..<routes).map { index in
                Route(domains: [try! HostName.parse("r\(index).corp.test")], upstreams: [Upstream("127.0.0.1:9")!])
            })
            let routed = CachingResolver(upstream: try! TrustedResolver(configuration: configuration),
                                         cache: ResolutionCache(limits: limits))
            for (index, name) in hot.enumerated() { routed.cache.store(stub.answer(for: name, index: index), family: .v4) }
            report(id, await asyncResolves(routed, hot, ops: opsHot, threads: 1))
        }

        for threads in [1, 2] {
            for (kind, keys, ops) in [("hot", hot, opsHot), ("random", all, opsRandom)] {
                let sync = "cache.sync.\(kind).t\(threads)"
                if wanted(sync) {
                    let cache = resolver.cache
                    let (wall, cpu) = syncLookups(keys, ops: ops, threads: threads) { cache.lookup($0, family: .v4)?.addresses.count }
                    report(sync, wall)
                    // Steadier than wall time on a loaded machine; not a row of results.tsv.
                    print("CPU \(sync) \(String(format: "%.1f", cpu))")
                }
                // Issue 32: the hit read in place (`CachingResolver.cachedAddresses`), as the proxy, the
                // interceptor and the stub read it: no `Resolution`, no array.
                let view = "cache.view.\(kind).t\(threads)"
                if wanted(view) {
                    let (wall, cpu) = syncLookups(keys, ops: ops, threads: threads) { resolver.cachedAddresses($0, family: .v4)?.count }
                    report(view, wall)
                    print("CPU \(view) \(String(format: "%.1f", cpu))")
                }
                let async = "cache.async.\(kind).t\(threads)"
                if wanted(async) { report(async, await asyncResolves(resolver, keys, ops: ops, threads: threads)) }
            }
        }
    }

    /// ns per `lookup` (which returns how many addresses a hit has), per thread, `threads` threads at once
    /// (hot: cycle through `names`; else random): wall time, and the CPU time of the looking threads
    /// (`CLOCK_THREAD_CPUTIME_ID`) per lookup.
    static func syncLookups(_ names: [HostName], ops: Int, threads: Int, _ lookup: @escaping @Sendable (HostName) -> Int?)
        -> (wall: Double, cpu: Double)
    {
        let cpu = Mutex<UInt64>(0)
        let start = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        let ready = DispatchGroup()
        let random = names.count > 16
        for t in 0..<threads {
            ready.enter()
            done.enter()
            let names = ownCopies(names)
            Thread.detachNewThread {
                ready.leave()
                start.wait()
                var rng = XorShift(state: 0x9E37_79B9_7F4A_7C15 &+ UInt64(t))
                var found = 0
                let cpu0 = threadCPUNanoseconds()
                for i in 0..<ops {
                    let name = random ? names[rng.next(below: names.count)] : names[i & 15]
                    if let count = lookup(name) { found &+= count }
                }
                let used = threadCPUNanoseconds() - cpu0
                cpu.withLock { $0 += used }
                if found != ops { fail("sync lookups: \(found) hits of \(ops)") }
                done.leave()
            }
        }
        ready.wait()
        let t0 = nowNanoseconds()
        for _ in 0..<threads { start.signal() }
        done.wait()
        return (Double(nowNanoseconds() - t0) / Double(ops), Double(cpu.withLock { $0 }) / Double(ops * threads))
    }

    /// `names` parsed again from a copy of their text: equal names whose storage no other thread holds
    /// (`parse` keeps an already-normal text's storage, so the text is copied first).
    static func ownCopies(_ names: [HostName]) -> [HostName] {
        names.map { try! HostName.parse(String(decoding: Array($0.text.utf8), as: UTF8.self)) }
    }

    /// ns per `resolve` (a fresh hit), per task, `threads` tasks at once on the cooperative pool.
    static func asyncResolves(_ resolver: CachingResolver, _ names: [HostName], ops: Int, threads: Int) async -> Double {
        let random = names.count > 16
        let t0 = nowNanoseconds()
        await withTaskGroup(of: Void.self) { group in
            for t in 0..<threads {
                let names = ownCopies(names)
                group.addTask {
                    var rng = XorShift(state: 0x9E37_79B9_7F4A_7C15 &+ UInt64(t))
                    var found = 0
                    for i in 0..<ops {
                        let name = random ? names[rng.next(below: names.count)] : names[i & 15]
                        do throws(ResolutionError) {
                            found &+= try await resolver.resolve(name, family: .v4).addresses.count
                        } catch {
                            fail("resolve: \(error)")
                        }
                    }
                    if found != ops { fail("async resolves: \(found) of \(ops)") }
                }
            }
        }
        return Double(nowNanoseconds() - t0) / Double(ops)
    }
}

/// Item 1, normalisation on its own: `HostName.parse` of an ASCII name needing lower-casing and a trailing
/// dot dropped, and of a Unicode name converted to A-labels by libidn2 (UTS #46).
enum ParseBench {
    static func run(_ options: Options) {
        let ops = options.int("ops", 300_000)
        for (id, inputs) in [("parse.ascii", ["WWW.Example.Test.", "api.example.com", "Cdn.Example.Test"]),
                             ("parse.idna", ["bücher.example.test", "Bücher.Example.Test.", "münchen.de"])] {
            var total = 0
            let t0 = nowNanoseconds()
            for i in 0..<ops {
                total &+= (try! HostName.parse(inputs[i % 3])).text.utf8.count
            }
            let elapsed = nowNanoseconds() - t0
            blackHole(total)
            report(id, Double(elapsed) / Double(ops))
        }
    }
}
