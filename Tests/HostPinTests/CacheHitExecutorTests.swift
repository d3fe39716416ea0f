import Dispatch
@testable import HostPin
import HostPinTestSupport
import Synchronization
import Testing

/// Where a cache hit runs (issue 32): `resolve` and `resolveDetailed` are `nonisolated(nonsending)`, so a
/// fresh hit stays on the caller's executor. An actor asking for a cached name is never left and entered
/// again: its executor gets no job per hit (before, every call hopped to the generic executor and its
/// return was a job on the actor's).
@Suite struct CacheHitExecutorTests {
    @Test func hitsStayOnTheCallingActorsExecutor() async throws {
        var configuration = TrustedResolver.Configuration(upstreams: [try Lab.current().trustedDNS])
        configuration.dnssec = .off
        let resolver = CachingResolver(upstream: try TrustedResolver(configuration: configuration))
        let name = try HostName.parse("www.example.test")
        #expect(try await resolver.resolve(name, family: .v4).source == .upstream)
        let executor = CountingExecutor()
        let caller = HitCaller(executor: executor)
        let (before, sources, after) = try await caller.hits(resolver, name, count: 100)
        #expect(sources == Array(repeating: .cache, count: 200))
        #expect(after - before == 0, "\(after - before) jobs on the actor's executor for 200 hits")
    }
}

/// A serial executor that counts the jobs enqueued on it and runs them on a queue of its own.
private final class CountingExecutor: SerialExecutor {
    private let queue = DispatchQueue(label: "hostpin-test-counting-executor")
    private let count = Atomic(0)

    var enqueued: Int { count.load(ordering: .relaxed) }

    func enqueue(_ job: consuming ExecutorJob) {
        count.add(1, ordering: .relaxed)
        let job = UnownedJob(job)
        queue.async { [self] in job.runSynchronously(on: asUnownedSerialExecutor()) }
    }
}

private actor HitCaller {
    private let executor: CountingExecutor

    init(executor: CountingExecutor) {
        self.executor = executor
    }

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// The executor's job count, the sources of `count` calls of `resolve` and of `resolveDetailed` for
    /// `name`, and the job count after them, all read on the actor.
    func hits(_ resolver: CachingResolver, _ name: HostName, count: Int) async throws
        -> (Int, [Resolution.Source], Int)
    {
        let before = executor.enqueued
        var sources: [Resolution.Source] = []
        for _ in 0..<count {
            sources.append(try await resolver.resolve(name, family: .v4).source)
            sources.append(try await resolver.resolveDetailed(name, family: .v4).source)
        }
        return (before, sources, executor.enqueued)
    }
}
