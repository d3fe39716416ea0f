@testable import HostPin
import Testing

/// ``ChainFlights``: one query per chain RRset in flight, its reply handed to later askers for a few
/// seconds, a failure kept for nobody, a waiter that leaves never resumed by the flight.
@Suite struct DNSSECChainFlightsTests {
    let zone = WireName("example.test")!
    var dnskey: ChainRequest { .dnskey(zone) }
    let record = DNSSECRecord(owner: WireName("example.test")!, type: DNSSECRecord.Kind.dnskey, ttl: 3600, rdata: [1, 0, 3, 13])

    @Test func theFirstAskerLeadsTheOthersJoinAndAllAreHandedBack() {
        var flights = ChainFlights<String>()
        #expect(flights.join(dnskey, id: 1, waiter: "first", at: 0) == .lead)
        #expect(flights.join(dnskey, id: 2, waiter: "second", at: 0) == .joined)
        #expect(flights.join(.ds(zone), id: 3, waiter: "other", at: 0) == .lead)
        #expect(flights.inFlight == 2)
        #expect(flights.finish(dnskey, records: [record], at: 1) == ["first", "second"])
        #expect(flights.inFlight == 1)
    }

    @Test func aReplyIsHandedToLaterAskersUntilItsLifetimeEnds() {
        var flights = ChainFlights<String>()
        _ = flights.join(dnskey, id: 1, waiter: "first", at: 0)
        _ = flights.finish(dnskey, records: [record], at: 10)
        #expect(flights.join(dnskey, id: 2, waiter: "later", at: 10 + ChainFlights<String>.recentLifetime - 1) == .answered([record]))
        #expect(flights.join(dnskey, id: 3, waiter: "late", at: 10 + ChainFlights<String>.recentLifetime) == .lead)
    }

    @Test func aFailedQueryIsKeptForNobody() {
        var flights = ChainFlights<String>()
        _ = flights.join(dnskey, id: 1, waiter: "first", at: 0)
        #expect(flights.finish(dnskey, records: nil, at: 0) == ["first"])
        #expect(flights.join(dnskey, id: 2, waiter: "next", at: 0) == .lead)
    }

    @Test func aWaiterThatLeavesIsNotResumedByTheFlight() {
        var flights = ChainFlights<String>()
        _ = flights.join(dnskey, id: 1, waiter: "lead", at: 0)
        _ = flights.join(dnskey, id: 2, waiter: "gone", at: 0)
        #expect(flights.leave(dnskey, id: 2) == "gone")
        #expect(flights.leave(dnskey, id: 2) == nil)
        #expect(flights.finish(dnskey, records: [record], at: 0) == ["lead"])
        #expect(flights.leave(dnskey, id: 1) == nil)  // the flight took it first
    }

    @Test func recentRepliesAreBounded() {
        var flights = ChainFlights<Int>()
        let capacity = ChainFlights<Int>.recentCapacity
        for index in 0...capacity {
            let request = ChainRequest.ds(WireName("z\(index).test")!)
            _ = flights.join(request, id: UInt64(index), waiter: index, at: 0)
            _ = flights.finish(request, records: [record], at: 0)
        }
        // The oldest went first; the newest is still handed out.
        #expect(flights.join(.ds(WireName("z0.test")!), id: 9_000, waiter: 0, at: 0) == .lead)
        #expect(flights.join(.ds(WireName("z\(capacity).test")!), id: 9_001, waiter: 0, at: 0) == .answered([record]))
    }
}
