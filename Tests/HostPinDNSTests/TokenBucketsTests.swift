import HostPin
@testable import HostPinDNS
import Testing

@Suite struct TokenBucketsTests {
    private static let start = ContinuousClock.now

    @Test func aSourceGetsItsBurstThenTheRate() {
        var buckets = TokenBuckets(limit: DNSServer.RateLimit(queriesPerSecond: 10, burst: 3))
        let source = IPAddress("192.0.2.1")!
        let burst = (0..<5).map { _ in buckets.admit(source, at: Self.start) }
        let refilled = buckets.admit(source, at: Self.start + .milliseconds(100))
        let tooSoon = buckets.admit(source, at: Self.start + .milliseconds(150))
        // Refilled to the burst, not beyond.
        let later = (0..<4).map { _ in buckets.admit(source, at: Self.start + .seconds(60)) }
        #expect(burst == [true, true, true, false, false])
        #expect(refilled)
        #expect(!tooSoon)
        #expect(later == [true, true, true, false])
    }

    @Test func sourcesAreIPv4AddressesAndIPv6Slash64s() {
        var buckets = TokenBuckets(limit: DNSServer.RateLimit(queriesPerSecond: 1, burst: 1))
        let admitted = ["192.0.2.1", "192.0.2.2", "2001:db8::1", "2001:db8::ffff:1", "2001:db8:0:1::1"]
            .map { buckets.admit(IPAddress($0)!, at: Self.start) }
        #expect(admitted == [true, true, true, false, true])  // the fourth shares the third's /64
    }

    @Test func theTableStaysBounded() {
        var buckets = TokenBuckets(limit: DNSServer.RateLimit(queriesPerSecond: 1, burst: 2), maximumSources: 100)
        var largest = 0
        for index in 0..<10_000 {
            _ = buckets.admit(IPAddress("10.0.\(index / 256).\(index % 256)")!, at: Self.start)
            largest = max(largest, buckets.count)
        }
        #expect(largest == 100)
    }
}
