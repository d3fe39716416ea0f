@testable import HostPin
import HostPinTestSupport
import Testing

/// The cache in front of real NSD, counting queries at the lab's counting instance. Serialized: every
/// test here reads that server's query counter, which no other suite uses.
@Suite(.serialized) struct CachingResolverTests {
    let lab: Lab

    init() throws {
        lab = try Lab.current()
    }

    @Test func fiftyConcurrentMissesMakeOneUpstreamResolution() async throws {
        // The relay holds queries for 300 ms, so all fifty callers miss while the first query is out.
        let relay = try DelayingRelay(target: lab.countDNS, delay: .milliseconds(300))
        defer { relay.stop() }
        let resolver = CachingResolver(upstream: try counted(relay.address))
        let before = try await lab.countedQueries()
        let answers = try await withThrowingTaskGroup(of: Resolution.self) { group in
            for _ in 0..<50 { group.addTask { try await resolver.resolve("www.example.test", family: .any) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let after = try await lab.countedQueries()
        #expect(answers.count == 50)
        #expect(answers.allSatisfy { $0.ipAddresses.map(\.description) == ["127.0.0.10"] })
        #expect(Set(answers.map(\.receivedAt)).count == 1)  // one shared answer
        #expect(after - before == 2)  // one A and one AAAA query
    }

    @Test func concurrentMissesShareTheError() async throws {
        let relay = try DelayingRelay(target: lab.countDNS, delay: .milliseconds(200))
        defer { relay.stop() }
        let resolver = CachingResolver(upstream: try counted(relay.address))
        let name = try HostName.parse("nx.example.test")
        let before = try await lab.countedQueries()
        let errors = await withTaskGroup(of: ResolutionError?.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    do throws(ResolutionError) { _ = try await resolver.resolve(name, family: .v4); return nil }
                    catch { return error }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(errors == Array(repeating: .nxdomain(name), count: 10))
        #expect(try await lab.countedQueries() - before == 1)
    }

    @Test func cancellingOneWaiterLeavesTheOthersTheAnswer() async throws {
        let relay = try DelayingRelay(target: lab.countDNS, delay: .milliseconds(300))
        defer { relay.stop() }
        let resolver = CachingResolver(upstream: try counted(relay.address))
        let first = Task { try await resolver.resolve("cdn.example.test", family: .v4) }
        let second = Task { try await resolver.resolve("cdn.example.test", family: .v4) }
        try await Task.sleep(for: .milliseconds(100))
        first.cancel()
        await #expect(throws: ResolutionError.cancelled) { try await first.value }
        #expect(try await second.value.ipAddresses.map(\.description) == ["127.0.0.11"])
        #expect(relay.received == 1)
    }

    @Test func batchLeadsAFlightThatATaskJoinsAndCachesTheAnswer() async throws {
        let relay = try DelayingRelay(target: lab.countDNS, delay: .milliseconds(100))
        defer { relay.stop() }
        let resolver = CachingResolver(upstream: try counted(relay.address))
        let cdn = try HostName.parse("cdn.example.test")
        let (outcomes, sink) = AsyncStream.makeStream(of: (Int, Result<ResolutionOutcome, ResolutionError>).self)
        let batch = resolver.resolveMany(family: .v4, concurrency: 4) { sink.yield(($0, $1)) }
        var iterator = outcomes.makeAsyncIterator()
        batch.submit(cdn, tag: 7)
        #expect(resolver.flightsInProgress == 1)
        let joiner = try await resolver.resolve("cdn.example.test", family: .v4)  // joins the batch's flight
        let led = try #require(await iterator.next())
        #expect(led.0 == 7)
        #expect(try led.1.get().get().ipAddresses.map(\.description) == ["127.0.0.11"])
        #expect(try led.1.get().source == .upstream)
        #expect(joiner.ipAddresses.map(\.description) == ["127.0.0.11"])
        #expect(relay.received == 1)
        batch.submit(cdn, tag: 8)  // a hit: its outcome is in the sink before submit returns
        sink.finish()
        let hit = try #require(await iterator.next())
        #expect(hit.0 == 8)
        #expect(try hit.1.get().source == .cache)
        #expect(relay.received == 1)
        #expect(resolver.flightsInProgress == 0)
    }

    /// Names handed over together go to the upstream as one block; a repeat in the same block joins the
    /// first one's flight, and every flight is out of the table once its answer is in.
    @Test func batchSendsItsMissesAsOneBlockAndJoinsARepeatWithinIt() async throws {
        let relay = try DelayingRelay(target: lab.countDNS, delay: .milliseconds(100))
        defer { relay.stop() }
        let resolver = CachingResolver(upstream: try counted(relay.address))
        let (outcomes, sink) = AsyncStream.makeStream(of: (Int, Result<ResolutionOutcome, ResolutionError>).self)
        let batch = resolver.resolveMany(family: .v4, concurrency: 8) { sink.yield(($0, $1)) }
        let labels = ["www", "cdn", "nx", "alias", "www"]
        batch.submit(contentsOf: try labels.enumerated().map { (try HostName.parse("\($1).example.test"), $0) })
        #expect(resolver.flightsInProgress == 4)
        var byTag: [Int: Result<ResolutionOutcome, ResolutionError>] = [:]
        for await (tag, outcome) in outcomes {
            byTag[tag] = outcome
            if byTag.count == labels.count { break }
        }
        #expect(try byTag[0]?.get().get().ipAddresses.map(\.description) == ["127.0.0.10"])
        #expect(try byTag[1]?.get().get().ipAddresses.map(\.description) == ["127.0.0.11"])
        #expect(throws: ResolutionError.nxdomain(try HostName.parse("nx.example.test"))) { try byTag[2]?.get().get() }
        #expect(try byTag[3]?.get().get().ipAddresses.map(\.description) == ["127.0.0.10"])
        #expect(try byTag[4]?.get().get().receivedAt == byTag[0]?.get().get().receivedAt)  // the joined answer
        #expect(try byTag[4]?.get().source == .upstream)
        #expect(relay.received == 4)
        #expect(resolver.flightsInProgress == 0)
    }

    @Test func batchJoinsAFlightATaskLeads() async throws {
        let relay = try DelayingRelay(target: lab.countDNS, delay: .milliseconds(300))
        defer { relay.stop() }
        let resolver = CachingResolver(upstream: try counted(relay.address))
        let leader = Task { try await resolver.resolve("cdn.example.test", family: .v4) }
        try await Task.sleep(for: .milliseconds(50))
        let (outcomes, sink) = AsyncStream.makeStream(of: Result<ResolutionOutcome, ResolutionError>.self)
        let batch = resolver.resolveMany(family: .v4, concurrency: 4) { sink.yield($1) }
        batch.submit(try HostName.parse("cdn.example.test"), tag: 0)
        var iterator = outcomes.makeAsyncIterator()
        let joined = try #require(await iterator.next())
        #expect(try joined.get().get().ipAddresses.map(\.description) == ["127.0.0.11"])
        #expect(try await leader.value.receivedAt == joined.get().get().receivedAt)  // one shared answer
        #expect(relay.received == 1)
    }

    @Test func batchResolvesAtMostConcurrencyNamesAtOnceAndReportsEach() async throws {
        let relay = try DelayingRelay(target: lab.countDNS, delay: .milliseconds(100))
        defer { relay.stop() }
        let resolver = CachingResolver(upstream: try counted(relay.address))
        let (outcomes, sink) = AsyncStream.makeStream(of: (Int, Result<ResolutionOutcome, ResolutionError>).self)
        let batch = resolver.resolveMany(family: .v4, concurrency: 2) { sink.yield(($0, $1)) }
        let names = ["www", "cdn", "nx", "www", "cdn", "alias"]
        for (tag, label) in names.enumerated() { batch.submit(try HostName.parse("\(label).example.test"), tag: tag) }
        // Two started (two flights), four wait their turn.
        #expect(resolver.flightsInProgress == 2)
        var byTag: [Int: Result<ResolutionOutcome, ResolutionError>] = [:]
        for await (tag, outcome) in outcomes {
            byTag[tag] = outcome
            if byTag.count == names.count { break }
        }
        #expect(try byTag[0]?.get().get().ipAddresses.map(\.description) == ["127.0.0.10"])
        #expect(try byTag[3]?.get().source == .cache)
        #expect(try byTag[4]?.get().source == .cache)
        #expect(throws: ResolutionError.nxdomain(try HostName.parse("nx.example.test"))) { try byTag[2]?.get().get() }
        #expect(try byTag[5]?.get().get().ipAddresses.map(\.description) == ["127.0.0.10"])
        #expect(relay.received == 4)  // www, cdn, nx, alias: the repeats were hits
    }

    @Test func callerCancelledBeforeItJoinsIsCancelled() async throws {
        let relay = try DelayingRelay(target: lab.countDNS, delay: .milliseconds(300))
        defer { relay.stop() }
        let resolver = CachingResolver(upstream: try counted(relay.address))
        let leader = Task { try await resolver.resolve("cdn.example.test", family: .v4) }
        try await Task.sleep(for: .milliseconds(50))
        let joiner = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await resolver.resolve("cdn.example.test", family: .v4)
        }
        await #expect(throws: ResolutionError.cancelled) { try await joiner.value }
        #expect(try await leader.value.ipAddresses.map(\.description) == ["127.0.0.11"])
        #expect(relay.received == 1)
    }

    @Test func flightTableEmptiesOnceResolutionsEnd() async throws {
        let resolver = CachingResolver(upstream: try TrustedResolver(configuration: .lab([lab.trustedDNS])))
        // 300 distinct names (NXDOMAIN), each asked by two callers, one of them cancelled.
        let errors = await withTaskGroup(of: ResolutionError?.self) { group in
            for i in 0..<300 {
                let name = "n\(i).example.test"
                group.addTask {
                    do throws(ResolutionError) { _ = try await resolver.resolve(name, family: .v4); return nil }
                    catch { return error }
                }
                Task { try await resolver.resolve(name, family: .v4) }.cancel()
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(errors.count == 300)
        #expect(errors.allSatisfy { if case .nxdomain = $0 { true } else { false } })
        // A flight whose every caller left still runs to its end; give those a moment.
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(10)
        while resolver.flightsInProgress > 0, clock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(resolver.flightsInProgress == 0)
        #expect(resolver.cache.count == 300)  // each NXDOMAIN, cached for its SOA's negative TTL
    }

    @Test func hitIsServedFromCacheUntilTTLThenAskedAgain() async throws {
        let clock = ManualClock()
        let resolver = CachingResolver(upstream: try counted(lab.countDNS),
                                       cache: ResolutionCache(clock: clock))
        let before = try await lab.countedQueries()
        let first = try await resolver.resolve("short.example.test", family: .v4)
        let second = try await resolver.resolve("short.example.test", family: .v4)
        let cached = try await lab.countedQueries()
        clock.advance(by: .seconds(1))
        let third = try await resolver.resolve("short.example.test", family: .v4)
        let after = try await lab.countedQueries()
        #expect(first.source == .upstream)
        #expect(second.source == .cache)
        #expect(second.ttl == 1)
        #expect(third.source == .upstream)
        #expect(cached - before == 1)
        #expect(after - cached == 1)
    }

    @Test func zeroTTLAnswerIsAskedEveryTime() async throws {
        let resolver = CachingResolver(upstream: try counted(lab.countDNS))
        let before = try await lab.countedQueries()
        for _ in 0..<3 {
            let answer = try await resolver.resolve("zero.example.test", family: .v4)
            #expect(answer.source == .upstream)
        }
        #expect(try await lab.countedQueries() - before == 3)
        #expect(resolver.cache.count == 0)
    }

    @Test func ipLiteralsMakeNoQuery() async throws {
        let resolver = CachingResolver(upstream: try counted(lab.countDNS))
        let before = try await lab.countedQueries()
        for literal in ["127.0.0.10", "::1", "[::1]", "localhost"] {
            let answer = try await resolver.resolve(literal)
            #expect(answer.source == .literal)
        }
        #expect(try await lab.countedQueries() - before == 0)
    }
}

/// A resolver on `upstream` (a relay to the counting NSD, or that NSD) that does not validate: these tests
/// count the queries of the answers themselves, to which validation would add its DNSKEY and DS queries.
private func counted(_ upstream: Upstream) throws -> TrustedResolver {
    var configuration = TrustedResolver.Configuration(upstreams: [upstream])
    configuration.dnssec = .off
    return try TrustedResolver(configuration: configuration)
}
