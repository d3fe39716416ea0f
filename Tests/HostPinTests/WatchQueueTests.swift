@testable import HostPin
import Testing

/// The watch's sampling, without a network: the limit per name, the overall limit, the bounded queue,
/// and the memory bound of the names it remembers. Times are monotonic nanoseconds.
@Suite struct WatchQueueTests {
    private static let second: UInt64 = 1_000_000_000

    private static func item(_ name: String) throws -> WatchQueue.Item {
        WatchQueue.Item(name: try HostName.parse(name), family: .v4, trusted: .nxdomain)
    }

    @Test func aNameIsQueuedOncePerNameInterval() throws {
        var queue = WatchQueue(nameInterval: .seconds(3600), overallInterval: .seconds(1), capacity: 16)
        let www = try Self.item("www.example.test")
        #expect(queue.offer(www, now: 0) == .queued)
        #expect(queue.offer(www, now: 5 * Self.second) == .recentlyCompared)
        #expect(queue.offer(www, now: 3599 * Self.second) == .recentlyCompared)
        #expect(queue.offer(www, now: 3600 * Self.second) == .queued)
        #expect(queue.next() == www)
        #expect(queue.next() == www)
        #expect(queue.next() == nil)
    }

    @Test func namesAreQueuedAtMostOncePerOverallInterval() throws {
        var queue = WatchQueue(nameInterval: .seconds(3600), overallInterval: .seconds(1), capacity: 16)
        let names = try (0..<10).map { try Self.item("n\($0).example.test") }
        #expect(names.map { queue.offer($0, now: 0) } == [.queued] + Array(repeating: .rateLimited, count: 9))
        #expect(names.map { queue.offer($0, now: Self.second / 2) }
                == [.recentlyCompared] + Array(repeating: .rateLimited, count: 9))
        #expect(names.map { queue.offer($0, now: Self.second) }
                == [.recentlyCompared, .queued] + Array(repeating: .rateLimited, count: 8))
        #expect([queue.next(), queue.next(), queue.next()] == [names[0], names[1], nil])
    }

    @Test func aFullQueueDropsWithoutCountingAgainstTheLimits() throws {
        var queue = WatchQueue(nameInterval: .seconds(3600), overallInterval: .zero, capacity: 2)
        let names = try (0..<4).map { try Self.item("n\($0).example.test") }
        #expect(names.map { queue.offer($0, now: 0) } == [.queued, .queued, .queueFull, .queueFull])
        #expect(queue.next() == names[0])
        // A dropped name was not stamped: it is queued as soon as there is room.
        #expect(queue.offer(names[2], now: 1) == .queued)
        #expect(queue.offer(names[3], now: 1) == .queueFull)
        #expect(queue.count == 2)
    }

    @Test func zeroIntervalsLimitNothingAndTheCapacityIsAtLeastOne() throws {
        var queue = WatchQueue(nameInterval: .zero, overallInterval: .seconds(-1), capacity: 0)
        let www = try Self.item("www.example.test")
        #expect(queue.offer(www, now: 0) == .queued)
        #expect(queue.offer(www, now: 0) == .queueFull)
        #expect(queue.next() == www)
        #expect(queue.offer(www, now: 0) == .queued)
    }

    @Test func namesWhoseIntervalRanOutAreForgotten() throws {
        // One name a second for 3 hours with the defaults: the table keeps about the last hour's.
        var queue = WatchQueue(nameInterval: .seconds(3600), overallInterval: .seconds(1), capacity: 16)
        var largest = 0
        for index in 0..<(3 * 3600) {
            #expect(queue.offer(try Self.item("n\(index).example.test"), now: UInt64(index) * Self.second) == .queued)
            _ = queue.next()
            largest = max(largest, queue.rememberedNames)
        }
        #expect(largest <= 2 * 3600 + 1)
        #expect(queue.rememberedNames <= 2 * 3600 + 1)
    }
}
