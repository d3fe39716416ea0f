@testable import HostPin
import Testing

/// The pure parts of the DoT transport: RFC 7766 framing and the table of queries in flight.
@Suite struct EncryptedFramingTests {
    @Test func framePrefixesTheLengthMostSignificantOctetFirst() {
        #expect(LengthPrefixedReader.frame([1, 2, 3]) == [0, 3, 1, 2, 3])
        #expect(LengthPrefixedReader.frame([UInt8](repeating: 7, count: 300)).prefix(2) == [1, 44])
    }

    @Test func readerReassemblesMessagesHoweverTheStreamIsCut() {
        let messages: [[UInt8]] = [Array(0..<12), Array(100..<140), [9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9]]
        let stream = messages.flatMap(LengthPrefixedReader.frame)
        for cut in 1...7 {
            var reader = LengthPrefixedReader()
            var out: [[UInt8]] = []
            var index = 0
            while index < stream.count {
                out += reader.append(stream[index..<min(index + cut, stream.count)])
                index += cut
            }
            #expect(out == messages, "cut every \(cut) octets")
            #expect(!reader.holdsPartialMessage)
        }
    }

    @Test func readerKnowsWhenItStoppedInsideAMessage() {
        var reader = LengthPrefixedReader()
        #expect(reader.append([0]).isEmpty)
        #expect(reader.holdsPartialMessage)  // half a length prefix
        #expect(reader.append([2, 5]).isEmpty)
        #expect(reader.holdsPartialMessage)
        #expect(reader.append([6]) == [[5, 6]])
        #expect(!reader.holdsPartialMessage)
    }

    @Test func messageIDIsTheFirstTwoOctets() {
        var message: [UInt8] = [0x12, 0x34, 0x01, 0x00]
        #expect(MessageID.read(message) == 0x1234)
        MessageID.write(0xBEEF, into: &message)
        #expect(message == [0xBE, 0xEF, 0x01, 0x00])
    }

    @Test func inFlightGivesEachQueryItsOwnWireIDAndRestoresTheOriginal() throws {
        var table = DoTInFlight()
        let now = ContinuousClock.now
        let first = table.assign(exchange: 1, originalID: 0x1234, at: now)
        let second = table.assign(exchange: 2, originalID: 0x1234, at: now)
        #expect(first != nil && second != nil)
        #expect(first != second)
        #expect(table.reply(to: try #require(second)) == DoTInFlight.Entry(exchange: 2, originalID: 0x1234, sentAt: now))
        #expect(table.reply(to: try #require(second)) == nil)  // answered once
        #expect(table.contains(1))
        #expect(!table.contains(2))
    }

    @Test func abandonedWireIDStaysReservedUntilItsReplyArrives() throws {
        var table = DoTInFlight()
        let now = ContinuousClock.now
        let assigned = table.assign(exchange: 1, originalID: 7, at: now)
        let abandoned = try #require(assigned)
        #expect(table.abandon(1) == now)
        // 65 535 more queries: none may get the abandoned query's ID, whose late reply may still come.
        var wireIDs: Set<UInt16?> = []
        for exchange in 2...65_536 { wireIDs.insert(table.assign(exchange: UInt64(exchange), originalID: 0, at: now)) }
        #expect(wireIDs.count == 65_535)
        #expect(!wireIDs.contains(nil) && !wireIDs.contains(abandoned))
        #expect(table.assign(exchange: 70_000, originalID: 0, at: now) == nil)  // every ID taken
        #expect(table.reply(to: abandoned) == DoTInFlight.Entry(exchange: nil, originalID: 7, sentAt: now))
        #expect(table.assign(exchange: 70_000, originalID: 0, at: now) == abandoned)
        #expect(table.removeAll().count == 65_536)
    }
}
