@testable import HostPin
import Testing

/// The ranking table (issue 30, part 2) on a clock moved by hand: measured addresses by time, failures
/// last, sinkholes excluded per name, special-purpose addresses never above public ones for a public
/// name, expiry, the bound, and a network change's reset.
@Suite struct AddressRankingTests {
    let clock = ManualClock()
    let name = try! HostName.parse("fast.example.com")

    func addresses(_ texts: String...) -> [IPAddress] { texts.map { IPAddress($0)! } }
    func endpoint(_ text: String, _ port: UInt16 = 443) -> AddressRanking.Endpoint { .init(IPAddress(text)!, port: port) }

    @Test func measuredByTimeThenNeverMeasuredInAnswerOrderThenFailed() {
        let ranking = AddressRanking(clock: clock)
        let answer = addresses("9.9.9.9", "1.1.1.1", "208.67.222.222", "93.184.216.34", "8.8.4.4")
        ranking.recordFailure(to: endpoint("9.9.9.9"))               // accepts and never speaks: timed out
        ranking.record(.milliseconds(100), to: endpoint("1.1.1.1"))
        ranking.record(.milliseconds(4), to: endpoint("93.184.216.34"))
        #expect(ranking.order(answer, port: 443, for: name)
                    == addresses("93.184.216.34", "1.1.1.1", "208.67.222.222", "8.8.4.4", "9.9.9.9"))
        // Per port: nothing is known of port 80.
        #expect(ranking.order(answer, port: 80, for: name) == answer)
    }

    @Test func sinkholeIsExcludedForThatNameOnly() {
        let ranking = AddressRanking(clock: clock)
        let answer = addresses("127.0.0.1", "93.184.216.34")
        ranking.exclude(endpoint("127.0.0.1"), for: name)
        #expect(ranking.order(answer, port: 443, for: name) == addresses("93.184.216.34"))
        let other = try! HostName.parse("other.example.com")
        #expect(ranking.order(answer, port: 443, for: other).count == 2)
        #expect(ranking.order(addresses("127.0.0.1"), port: 443, for: name).isEmpty)
    }

    @Test func specialPurposeNeverRanksAbovePublicForAPublicName() {
        let ranking = AddressRanking(clock: clock)
        // A local black box answers fastest: still after every public address, even one that failed.
        ranking.record(.microseconds(50), to: endpoint("127.0.0.1"))
        ranking.record(.microseconds(80), to: endpoint("10.0.0.9"))
        ranking.record(.milliseconds(300), to: endpoint("93.184.216.34"))
        ranking.recordFailure(to: endpoint("1.1.1.1"))
        let answer = addresses("127.0.0.1", "10.0.0.9", "1.1.1.1", "93.184.216.34")
        #expect(ranking.order(answer, port: 443, for: name)
                    == addresses("93.184.216.34", "1.1.1.1", "127.0.0.1", "10.0.0.9"))
        // For a special-use name (the LAN's `.local`, `home.arpa`), loopback and private compete on time.
        let lan = try! HostName.parse("printer.local")
        #expect(ranking.order(answer, port: 443, for: lan)[0] == IPAddress("127.0.0.1")!)
    }

    @Test func rankingsExpireAfterTenMinutes() {
        let ranking = AddressRanking(clock: clock)
        let answer = addresses("1.1.1.1", "93.184.216.34")
        ranking.record(.milliseconds(2), to: endpoint("93.184.216.34"))
        ranking.exclude(endpoint("1.1.1.1"), for: name)
        clock.advance(by: .seconds(599))
        #expect(ranking.order(answer, port: 443, for: name) == addresses("93.184.216.34"))
        clock.advance(by: .seconds(1))
        #expect(ranking.order(answer, port: 443, for: name) == answer)
    }

    @Test func smoothedTimeFollowsNewSamples() {
        let ranking = AddressRanking(clock: clock)
        let answer = addresses("1.1.1.1", "93.184.216.34")
        ranking.record(.milliseconds(10), to: endpoint("1.1.1.1"))
        ranking.record(.milliseconds(20), to: endpoint("93.184.216.34"))
        #expect(ranking.order(answer, port: 443, for: name) == answer)
        // One slow connection of the first moves its average past the second's (10 → 32.5 ms).
        ranking.record(.milliseconds(100), to: endpoint("1.1.1.1"))
        #expect(ranking.order(answer, port: 443, for: name) == addresses("93.184.216.34", "1.1.1.1"))
        // A success after a failure starts the average afresh.
        ranking.recordFailure(to: endpoint("93.184.216.34"))
        ranking.record(.milliseconds(1), to: endpoint("93.184.216.34"))
        #expect(ranking.order(answer, port: 443, for: name) == addresses("93.184.216.34", "1.1.1.1"))
    }

    @Test func boundedAtTheLimitForgettingTheOldest() {
        let ranking = AddressRanking(limit: 10_000, clock: clock)
        for index in 0..<25_000 {
            clock.advance(by: .milliseconds(1))
            let address = IPAddress("198.\(18 + index / 65_536 % 2).\(index / 256 % 256).\(index % 256)")!
            ranking.record(.milliseconds(5), to: .init(address, port: 443))
        }
        #expect(ranking.count <= 10_000)
        #expect(ranking.count >= 9_000)
        // The newest is still known; the first was forgotten.
        let newest = IPAddress("198.\(18 + 24_999 / 65_536 % 2).\(24_999 / 256 % 256).\(24_999 % 256)")!
        let unknown = IPAddress("203.0.113.1")!
        #expect(ranking.order([unknown, newest], port: 443, for: name) == [newest, unknown])
        let first = IPAddress("198.18.0.0")!
        #expect(ranking.order([unknown, first], port: 443, for: name) == [unknown, first])
    }

    @Test func networkChangeDropsEverything() {
        let ranking = AddressRanking(clock: clock)
        let answer = addresses("1.1.1.1", "93.184.216.34")
        ranking.record(.milliseconds(2), to: endpoint("93.184.216.34"))
        ranking.exclude(endpoint("1.1.1.1"), for: name)
        ranking.removeAll()
        #expect(ranking.order(answer, port: 443, for: name) == answer)
        #expect(ranking.count == 0)
    }
}
