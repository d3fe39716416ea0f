@testable import HostPinDNS
import Testing

@Suite struct IncomingMessageTests {
    @Test func aQueryIsReadWithItsHeaderQuestionAndEDNS() throws {
        let wire = TestMessage.query("WwW.ExAmPlE.TeSt", type: 28, id: 0x4242, udpSize: 4096, checkingDisabled: true)
        guard case .query(let query) = IncomingMessage(wire: wire) else {
            Issue.record("not read as a query: \(IncomingMessage(wire: wire))")
            return
        }
        #expect(query.header == DNSRequestHeader(id: 0x4242, opcode: 0, recursionDesired: true, checkingDisabled: true,
                                                  edns: .init(udpPayloadSize: 4096, version: 0, dnssecOK: false)))
        #expect(query.question.name == "WwW.ExAmPlE.TeSt")
        #expect(query.question.type == .aaaa)
        #expect(query.question.dnsClass == 1)
        #expect(query.question.wireName == HostileBytes.name([Array("WwW".utf8), Array("ExAmPlE".utf8), Array("TeSt".utf8)]))
    }

    @Test func aQueryWithoutOPTHasNoEDNS() throws {
        guard case .query(let query) = IncomingMessage(wire: TestMessage.query("www.example.test", udpSize: nil)) else {
            Issue.record("not read as a query")
            return
        }
        #expect(query.header.edns == nil)
    }

    @Test func aResponseIsDropped() {
        var wire = TestMessage.query("www.example.test")
        wire[2] |= 0x80
        #expect(IncomingMessage(wire: wire) == .drop(.response))
    }

    @Test func anUnreadableResponseIsDroppedToo() {
        var wire = HostileBytes.pointerLoop
        wire[2] |= 0x80
        #expect(IncomingMessage(wire: wire) == .drop(.response))
    }

    @Test func anOpcodeOtherThanQueryIsNotImplementedWithItsQuestionEchoed() throws {
        let wire = TestMessage.query("www.example.test", opcode: 4)  // NOTIFY
        guard case .reject(let header, let question, let rcode) = IncomingMessage(wire: wire) else {
            Issue.record("not rejected")
            return
        }
        #expect(rcode == .notimp)
        #expect(header.opcode == 4)
        #expect(question?.name == "www.example.test")
    }

    @Test func oneOPTRecordIsRead() {
        guard case .query(let query) = IncomingMessage(wire: HostileBytes.optRecords(1)) else {
            Issue.record("not a query: \(IncomingMessage(wire: HostileBytes.optRecords(1)))")
            return
        }
        #expect(query.header.edns == .init(udpPayloadSize: 1232, version: 0, dnssecOK: false))
    }

    /// RFC 6891 §6.1.1: more than one OPT record is FORMERR, echoing the question.
    @Test(arguments: [2, 3, 256, 257] as [UInt16])
    func moreThanOneOPTRecordIsAFormatError(_ count: UInt16) {
        let wire = HostileBytes.optRecords(count)
        guard case .reject(let header, let question, .formerr) = IncomingMessage(wire: wire) else {
            Issue.record("\(count) OPT records: \(IncomingMessage(wire: wire))")
            return
        }
        #expect(header.id == 0xBEEF)
        #expect(question?.name == "www.example.test")
    }

    /// RFC 8945 §5.2.1: a signed query is read with its TSIG's key, algorithm, time, fudge and original ID.
    @Test(arguments: [1232, nil] as [UInt16?])
    func aSignedQueryIsAnUnknownKey(udpSize: UInt16?) throws {
        let wire = TestMessage.signedQuery("www.example.test", id: 0x7777, udpSize: udpSize)
        guard case .unknownKey(let header, let question, let tsig) = IncomingMessage(wire: wire) else {
            Issue.record("not an unknown key: \(IncomingMessage(wire: wire))")
            return
        }
        let sent = try #require(TestResponse(wire)?.tsig)
        #expect(header.id == 0x7777 && header.edns?.udpPayloadSize == udpSize)
        #expect(question?.name == "www.example.test")
        #expect(tsig == TSIGRecord(keyName: HostileBytes.name([Array("hostpin-test-key".utf8)]),
                                   algorithm: HostileBytes.name([Array("hmac-sha256".utf8)]),
                                   timeSigned: sent.timeSigned, fudge: 300, originalID: 0x7777))
    }

    /// RFC 8945 §5.2: a TSIG before another additional record, or two TSIGs, is FORMERR, the question echoed.
    @Test(arguments: TestMessage.SignedTrailer.allCases)
    func aTSIGThatIsNotLastIsAFormatError(_ trailer: TestMessage.SignedTrailer) {
        let wire = TestMessage.signedQuery("www.example.test", followedBy: trailer)
        #expect(TSIGPlacement(wire: wire) == .misplaced(firstIndex: 0))
        guard case .reject(let header, let question, .formerr) = IncomingMessage(wire: wire) else {
            Issue.record("\(trailer): \(IncomingMessage(wire: wire))")
            return
        }
        #expect(header.id == 0x1234)
        #expect(question?.name == "www.example.test")
    }

    @Test func theTSIGPlacementIsFoundOverEverySection() {
        #expect(TSIGPlacement(wire: TestMessage.signedQuery("www.example.test")) == .last)
        #expect(TSIGPlacement(wire: TestMessage.query("www.example.test")) == .none)
        #expect(TSIGPlacement(wire: HostileBytes.optRecords(3)) == .none)
        // Cut short inside the TSIG: no placement; ldns then finds the message unreadable (FORMERR).
        let signed = TestMessage.signedQuery("www.example.test")
        #expect(TSIGPlacement(wire: Array(signed.dropLast(3))) == .none)
        guard case .reject(_, nil, .formerr) = IncomingMessage(wire: Array(signed.dropLast(3))) else {
            Issue.record("a cut TSIG: \(IncomingMessage(wire: Array(signed.dropLast(3))))")
            return
        }
    }

    @Test func everyTruncationOfAQueryIsDroppedOrFormatError() {
        let wire = TestMessage.query("www.example.test", type: 28, udpSize: 1232)
        for length in 0..<wire.count {
            let outcome = IncomingMessage(wire: Array(wire.prefix(length)))
            if length < 12 {
                #expect(outcome == .drop(.noHeader), "length \(length)")
            } else {
                guard case .reject(let header, nil, .formerr) = outcome else {
                    Issue.record("length \(length): \(outcome)")
                    continue
                }
                #expect(header.id == 0x1234, "length \(length)")
            }
        }
    }

    @Test(arguments: HostileBytes.named.map(\.key))
    func aMalformedQueryIsAFormatErrorWithItsID(_ name: String) {
        let wire = HostileBytes.named(name)
        guard case .reject(let header, nil, .formerr) = IncomingMessage(wire: wire) else {
            Issue.record("\(name): \(IncomingMessage(wire: wire))")
            return
        }
        #expect(header.id == 0xBEEF)
        #expect(header.recursionDesired)
    }

    @Test func aNameOf255OctetsIsAQuery() {
        guard case .query(let query) = IncomingMessage(wire: HostileBytes.name255) else {
            Issue.record("not a query: \(IncomingMessage(wire: HostileBytes.name255))")
            return
        }
        #expect(query.question.wireName.count == 255)
    }

    @Test func aForwardPointerIsFollowed() {
        guard case .query(let query) = IncomingMessage(wire: HostileBytes.forwardPointer) else {
            Issue.record("not a query: \(IncomingMessage(wire: HostileBytes.forwardPointer))")
            return
        }
        #expect(query.question.name == "www.example.test")
    }

    @Test func randomBytesAreDroppedOrAnsweredWithTheirID() {
        for (index, wire) in HostileBytes.random(count: 20_000, seed: 15).enumerated() {
            switch IncomingMessage(wire: wire) {
            case .drop(.noHeader):
                #expect(wire.count < 12, "message \(index)")
            case .drop(.response):
                #expect(wire[2] & 0x80 != 0, "message \(index)")
            case .reject(let header, _, _), .unknownKey(let header, _, _):
                #expect(header.id == UInt16(wire[0]) << 8 | UInt16(wire[1]), "message \(index)")
            case .query(let query):
                #expect(query.header.id == UInt16(wire[0]) << 8 | UInt16(wire[1]), "message \(index)")
                #expect(query.question.wireName.count <= 255, "message \(index)")
            }
        }
    }
}
