import HostPin
import Testing

/// Addresses ranked by verified connection time: pure, on a clock the test moves by hand, no network.
@Suite struct AddressRankingTests {
    let start = ContinuousClock.now
    let name = "fast.example.test"

    private func addresses(_ texts: [String]) throws -> [IPAddress] {
        try texts.map { try #require(IPAddress($0)) }
    }

    private func address(_ text: String) throws -> IPAddress {
        try #require(IPAddress(text))
    }

    @Test func unmeasuredAddressesKeepTheAnswerOrder() throws {
        let ranking = AddressRanking()
        let answer = try addresses(["127.0.0.3", "127.0.0.1", "127.0.0.2"])
        #expect(ranking.order(answer, for: name, port: 443, at: start) == answer)
    }

    @Test func measuredComeFastestFirstThenUnmeasuredInAnswerOrder() throws {
        var ranking = AddressRanking()
        let answer = try addresses(["127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"])
        ranking.record(.milliseconds(100), to: answer[3], port: 443, at: start)
        ranking.record(.milliseconds(5), to: answer[1], port: 443, at: start)
        ranking.record(.milliseconds(100), to: answer[2], port: 443, at: start)
        #expect(ranking.order(answer, for: name, port: 443, at: start).map(\.description)
            == ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.1", "127.0.0.5"])
    }

    @Test func timesArePerPort() throws {
        var ranking = AddressRanking()
        let answer = try addresses(["127.0.0.1", "127.0.0.2"])
        ranking.record(.milliseconds(5), to: answer[1], port: 443, at: start)
        #expect(ranking.order(answer, for: name, port: 80, at: start) == answer)
        #expect(ranking.order(answer, for: name, port: 443, at: start) == [answer[1], answer[0]])
        #expect(ranking.smoothedTime(to: answer[1], port: 80, at: start) == nil)
    }

    @Test func samplesAreSmoothedWithAnEighthAsRFC6298SRTT() throws {
        var ranking = AddressRanking()
        let fast = try address("127.0.0.1")
        ranking.record(.milliseconds(80), to: fast, port: 443, at: start)
        #expect(ranking.smoothedTime(to: fast, port: 443, at: start) == .milliseconds(80))
        ranking.record(.milliseconds(160), to: fast, port: 443, at: start + .seconds(1))
        #expect(ranking.smoothedTime(to: fast, port: 443, at: start + .seconds(1)) == .milliseconds(90))
        ranking.record(.milliseconds(10), to: fast, port: 443, at: start + .seconds(2))
        #expect(ranking.smoothedTime(to: fast, port: 443, at: start + .seconds(2)) == .milliseconds(80))
    }

    @Test func oneSlowSampleDoesNotOvertakeAFasterAddress() throws {
        var ranking = AddressRanking()
        let answer = try addresses(["127.0.0.1", "127.0.0.2"])
        ranking.record(.milliseconds(10), to: answer[0], port: 443, at: start)
        ranking.record(.milliseconds(30), to: answer[1], port: 443, at: start)
        // 7/8 · 10 + 1/8 · 170 = 30: level with the other; equal times keep the answer order.
        ranking.record(.milliseconds(170), to: answer[0], port: 443, at: start + .seconds(1))
        #expect(ranking.smoothedTime(to: answer[0], port: 443, at: start + .seconds(1)) == .milliseconds(30))
        #expect(ranking.order(answer, for: name, port: 443, at: start + .seconds(1)) == answer)
        ranking.record(.milliseconds(170), to: answer[0], port: 443, at: start + .seconds(2))
        #expect(ranking.smoothedTime(to: answer[0], port: 443, at: start + .seconds(2)) == .microseconds(47_500))
        #expect(ranking.order(answer, for: name, port: 443, at: start + .seconds(2)) == [answer[1], answer[0]])
    }

    @Test func measurementsExpireTenMinutesAfterTheLastSample() throws {
        var ranking = AddressRanking()
        let answer = try addresses(["127.0.0.1", "127.0.0.2"])
        ranking.record(.milliseconds(50), to: answer[1], port: 443, at: start)
        ranking.record(.milliseconds(40), to: answer[1], port: 443, at: start + .seconds(60))
        let lastSample = start + .seconds(60)
        #expect(ranking.order(answer, for: name, port: 443, at: lastSample + .seconds(599)) == [answer[1], answer[0]])
        #expect(ranking.smoothedTime(to: answer[1], port: 443, at: lastSample + .seconds(599)) == .microseconds(48_750))
        #expect(ranking.order(answer, for: name, port: 443, at: lastSample + .seconds(600)) == answer)
        #expect(ranking.smoothedTime(to: answer[1], port: 443, at: lastSample + .seconds(600)) == nil)
        // A sample after expiry starts afresh, not smoothed with the old value.
        ranking.record(.milliseconds(200), to: answer[1], port: 443, at: lastSample + .seconds(601))
        #expect(ranking.smoothedTime(to: answer[1], port: 443, at: lastSample + .seconds(601)) == .milliseconds(200))
    }

    @Test func excludedAddressIsRemovedForThatNameOnly() throws {
        var ranking = AddressRanking()
        let answer = try addresses(["127.0.0.66", "127.0.0.10"])
        ranking.record(.milliseconds(1), to: answer[0], port: 443, at: start)
        ranking.exclude(answer[0], for: name, at: start)
        #expect(ranking.order(answer, for: name, port: 443, at: start) == [answer[1]])
        #expect(ranking.order(answer, for: "www.example.test", port: 443, at: start) == answer)
        #expect(ranking.isExcluded(answer[0], for: name, at: start))
        #expect(!ranking.isExcluded(answer[0], for: "www.example.test", at: start))
        #expect(ranking.order([answer[0]], for: name, port: 443, at: start) == [])
    }

    @Test func exclusionExpiresTenMinutesAfterItWasMade() throws {
        var ranking = AddressRanking()
        let sinkhole = try address("127.0.0.66")
        ranking.exclude(sinkhole, for: name, at: start)
        #expect(ranking.isExcluded(sinkhole, for: name, at: start + .seconds(599)))
        #expect(!ranking.isExcluded(sinkhole, for: name, at: start + .seconds(600)))
    }

    @Test func loopbackRanksBelowPublicForAPublicNameHoweverFast() throws {
        var ranking = AddressRanking()
        let answer = try addresses(["127.0.0.1", "93.184.216.34", "10.0.0.5", "198.41.0.4", "::1", "2606:4700::1111"])
        ranking.record(.microseconds(50), to: answer[0], port: 443, at: start)
        ranking.record(.microseconds(60), to: answer[2], port: 443, at: start)
        ranking.record(.milliseconds(40), to: answer[3], port: 443, at: start)
        #expect(ranking.order(answer, for: "www.example.com", port: 443, at: start).map(\.description)
            == ["198.41.0.4", "93.184.216.34", "2606:4700::1111", "127.0.0.1", "10.0.0.5", "::1"])
    }

    @Test func specialPurposeOnlyAnswerIsRankedAmongItself() throws {
        var ranking = AddressRanking()
        let answer = try addresses(["127.0.0.1", "127.0.0.2"])
        ranking.record(.milliseconds(3), to: answer[1], port: 443, at: start)
        #expect(ranking.order(answer, for: name, port: 443, at: start) == [answer[1], answer[0]])
    }

    @Test func nameUnderASpecialUseZoneRanksPrivateAddressesByTimeAlone() throws {
        var ranking = AddressRanking()
        let answer = try addresses(["93.184.216.34", "192.168.1.20"])
        ranking.record(.milliseconds(2), to: answer[1], port: 80, at: start)
        #expect(ranking.order(answer, for: "printer.home.arpa", port: 80, at: start) == [answer[1], answer[0]])
        #expect(ranking.order(answer, for: "printer.example.com", port: 80, at: start) == answer)
    }

    @Test func atMostCapacityEntriesTheOldestUpdatedEvictedFirst() throws {
        var ranking = AddressRanking()
        #expect(ranking.capacity == 10_000)
        let first = try address("10.0.0.0")
        for index in 0..<10_000 {
            let address = try self.address("10.0.\(index / 256).\(index % 256)")
            ranking.record(.milliseconds(1 + index % 100), to: address, port: 443, at: start + .milliseconds(index))
        }
        #expect(ranking.measuredCount == 10_000)
        // The oldest is written again: now 10.0.0.1 is the oldest, and goes when one more arrives.
        ranking.record(.milliseconds(1), to: first, port: 443, at: start + .seconds(11))
        ranking.record(.milliseconds(1), to: try address("10.1.0.0"), port: 443, at: start + .seconds(12))
        #expect(ranking.measuredCount == 10_000)
        let now = start + .seconds(12)
        #expect(ranking.smoothedTime(to: first, port: 443, at: now) == .milliseconds(1))
        #expect(ranking.smoothedTime(to: try address("10.0.0.1"), port: 443, at: now) == nil)
        #expect(ranking.smoothedTime(to: try address("10.0.0.2"), port: 443, at: now) == .milliseconds(3))
        #expect(ranking.smoothedTime(to: try address("10.1.0.0"), port: 443, at: now) == .milliseconds(1))
    }

    @Test func repeatedSamplesKeepOneEntryEach() throws {
        var ranking = AddressRanking(capacity: 3)
        let answer = try addresses(["127.0.0.1", "127.0.0.2", "127.0.0.3"])
        for step in 0..<10_000 {
            ranking.record(.milliseconds(10), to: answer[step % 3], port: 443, at: start + .milliseconds(step))
        }
        #expect(ranking.measuredCount == 3)
        #expect(answer.allSatisfy { ranking.smoothedTime(to: $0, port: 443, at: start + .seconds(10)) == .milliseconds(10) })
    }

    @Test func exclusionsAreBoundedToo() throws {
        var ranking = AddressRanking(capacity: 2)
        let sinkhole = try address("127.0.0.66")
        ranking.exclude(sinkhole, for: "a.example.test", at: start)
        ranking.exclude(sinkhole, for: "b.example.test", at: start + .seconds(1))
        ranking.exclude(sinkhole, for: "c.example.test", at: start + .seconds(2))
        let now = start + .seconds(3)
        #expect(!ranking.isExcluded(sinkhole, for: "a.example.test", at: now))
        #expect(ranking.isExcluded(sinkhole, for: "b.example.test", at: now))
        #expect(ranking.isExcluded(sinkhole, for: "c.example.test", at: now))
    }

    @Test func removeAllForgetsTimesAndExclusions() throws {
        var ranking = AddressRanking()
        let answer = try addresses(["127.0.0.1", "127.0.0.2"])
        ranking.record(.milliseconds(1), to: answer[1], port: 443, at: start)
        ranking.exclude(answer[0], for: name, at: start)
        ranking.removeAll()
        #expect(ranking.measuredCount == 0)
        #expect(ranking.order(answer, for: name, port: 443, at: start) == answer)
    }

    @Test func preferredFamilyIsTheTopMeasuredAddresssOnly() throws {
        var ranking = AddressRanking()
        let answer = try addresses(["::1", "127.0.0.1"])
        #expect(ranking.preferredFamily(of: answer, port: 443, at: start) == nil)
        ranking.record(.milliseconds(1), to: answer[1], port: 443, at: start)
        let ordered = ranking.order(answer, for: name, port: 443, at: start)
        #expect(ordered == [answer[1], answer[0]])
        #expect(ranking.preferredFamily(of: ordered, port: 443, at: start) == .v4)
    }

    @Test func sharedRankingRacesTheMeasuredFamilyFirst() throws {
        let shared = SharedAddressRanking()
        let answer = try addresses(["2606:4700::1111", "2606:4700::1001", "93.184.216.34", "198.41.0.4"])
        let eyeballs = HappyEyeballs()
        #expect(shared.attemptOrder(answer, for: name, port: 443, happyEyeballs: eyeballs, at: start).map(\.description)
            == ["2606:4700::1111", "93.184.216.34", "2606:4700::1001", "198.41.0.4"])
        shared.record(.milliseconds(2), to: answer[3], port: 443, at: start)
        #expect(shared.attemptOrder(answer, for: name, port: 443, happyEyeballs: eyeballs, at: start).map(\.description)
            == ["198.41.0.4", "2606:4700::1111", "93.184.216.34", "2606:4700::1001"])
        shared.exclude(answer[3], for: name, at: start)
        #expect(shared.attemptOrder(answer, for: name, port: 443, happyEyeballs: eyeballs, at: start).map(\.description)
            == ["2606:4700::1111", "93.184.216.34", "2606:4700::1001"])
        // Every address excluded: all of them, so that the certificate check fails again and says why.
        #expect(shared.attemptOrder([answer[3]], for: name, port: 443, happyEyeballs: eyeballs, at: start) == [answer[3]])
        shared.removeAll()
        #expect(shared.snapshot.measuredCount == 0)
        #expect(!shared.isExcluded(answer[3], for: name, at: start))
    }

    @Test func sharedRankingKeepsSpecialPurposeAfterPublicAcrossFamilies() throws {
        let shared = SharedAddressRanking()
        let answer = try addresses(["93.184.216.34", "::1", "198.41.0.4"])
        shared.record(.milliseconds(20), to: answer[0], port: 443, at: start)
        #expect(shared.attemptOrder(answer, for: "www.example.com", port: 443, happyEyeballs: HappyEyeballs(), at: start)
            .map(\.description) == ["93.184.216.34", "198.41.0.4", "::1"])
    }
}
