import HostPin
@testable import HostPinNet
import Testing

/// rtnetlink messages built byte by byte as the kernel lays them out (rtnetlink(7)), judged without a
/// network: what counts as a change, and what (a lifetime update, a dump's reply, another table) does not.
@Suite struct NetlinkClassifierTests {
    static let ours: UInt32 = 4242

    /// An `rtattr`: length, type, value, padded to 4.
    static func attribute(_ type: UInt16, _ value: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.appendUInt16(UInt16(4 + value.count))
        out.appendUInt16(type)
        out += value
        while out.count % 4 != 0 { out.append(0) }
        return out
    }

    static func link(_ type: UInt16, index: UInt32, flags: UInt32, port: UInt32 = 0, sequence: UInt32 = 0) -> NetlinkMessage {
        var payload: [UInt8] = [0, 0]  // family AF_UNSPEC, pad
        payload.appendUInt16(1)        // ARPHRD_ETHER
        payload.appendUInt32(index)
        payload.appendUInt32(flags)
        payload.appendUInt32(0xFFFF_FFFF)
        payload += attribute(3, Array("veth0".utf8) + [0])  // IFLA_IFNAME
        return NetlinkMessage(type: type, flags: 0, sequence: sequence, port: port, payload: payload)
    }

    static func address(_ type: UInt16, _ bytes: [UInt8], prefix: UInt8 = 24, index: UInt32 = 7, port: UInt32 = 0,
                        sequence: UInt32 = 0, preferred: UInt32 = 3600) -> NetlinkMessage {
        var payload: [UInt8] = [bytes.count == 4 ? 2 : 10, prefix, 0, 0]
        payload.appendUInt32(index)
        payload += attribute(1, bytes)  // IFA_ADDRESS
        if bytes.count == 4 { payload += attribute(2, bytes) }  // IFA_LOCAL
        var cacheInfo: [UInt8] = []  // ifa_cacheinfo: preferred, valid, created, updated
        for value in [preferred, preferred * 2, 100, 200] { cacheInfo.appendUInt32(value) }
        payload += attribute(6, cacheInfo)
        return NetlinkMessage(type: type, flags: 0, sequence: sequence, port: port, payload: payload)
    }

    static func route(_ type: UInt16, family: UInt8 = 2, destinationLength: UInt8 = 0, table: UInt8 = 254,
                      routeType: UInt8 = 1, gateway: [UInt8] = [10, 30, 0, 1], interface: UInt32 = 7,
                      port: UInt32 = 0, sequence: UInt32 = 0) -> NetlinkMessage {
        var payload: [UInt8] = [family, destinationLength, 0, 0, table, 3, 0, routeType]
        payload.appendUInt32(0)
        var tableValue: [UInt8] = []
        tableValue.appendUInt32(UInt32(table))
        payload += attribute(15, tableValue)  // RTA_TABLE
        var oif: [UInt8] = []
        oif.appendUInt32(interface)
        payload += attribute(4, oif)  // RTA_OIF
        payload += attribute(5, gateway)  // RTA_GATEWAY
        return NetlinkMessage(type: type, flags: 0, sequence: sequence, port: port, payload: payload)
    }

    static func readings(_ messages: [NetlinkMessage], classifier: inout NetlinkClassifier) -> [NetlinkClassifier.Reading] {
        // Through the bytes, as the socket gives them: one datagram with every message.
        NetlinkMessage.messages(in: messages.flatMap(\.bytes)).map { classifier.read($0) }
    }

    @Test func datagramOfSeveralMessagesReadsBackEach() {
        let messages = [Self.link(NetlinkMessage.newLink, index: 3, flags: 0x41),
                        Self.address(NetlinkMessage.newAddress, [10, 30, 0, 2]),
                        Self.route(NetlinkMessage.deleteRoute)]
        #expect(NetlinkMessage.messages(in: messages.flatMap(\.bytes)) == messages)
    }

    @Test func truncatedOrLyingLengthEndsTheReadingWithoutACrash() {
        var bytes = Self.address(NetlinkMessage.newAddress, [10, 30, 0, 2]).bytes
        bytes[0] = 0xFF  // a length past the datagram
        #expect(NetlinkMessage.messages(in: bytes).isEmpty)
        #expect(NetlinkMessage.messages(in: [1, 2, 3]).isEmpty)
        var short = Self.route(NetlinkMessage.newRoute).bytes
        short[0] = 4  // shorter than the header
        #expect(NetlinkMessage.messages(in: short).isEmpty)
        var classifier = NetlinkClassifier()
        let bare = NetlinkMessage(type: NetlinkMessage.newAddress, flags: 0, sequence: 0, port: 0, payload: [2, 24])
        #expect(classifier.read(bare) == .nothing)
    }

    @Test func addressAddedOnceThenLifetimeUpdatesDoNotCount() {
        var classifier = NetlinkClassifier(port: Self.ours)
        let readings = Self.readings([
            Self.address(NetlinkMessage.newAddress, [10, 30, 0, 2]),
            Self.address(NetlinkMessage.newAddress, [10, 30, 0, 2], preferred: 1800),  // lifetimes renewed
            Self.address(NetlinkMessage.newAddress, [0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2], prefix: 64),
            Self.address(NetlinkMessage.newAddress, [0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2], prefix: 64, preferred: 10),
            Self.address(NetlinkMessage.deleteAddress, [10, 30, 0, 2]),
            Self.address(NetlinkMessage.newAddress, [10, 30, 0, 2]),  // back again: a change
        ], classifier: &classifier)
        #expect(readings == [.event(.addressAdded), .nothing, .event(.addressAdded), .nothing,
                             .event(.addressRemoved), .event(.addressAdded)])
    }

    @Test func sameAddressOnAnotherInterfaceOrPrefixIsANewAddress() {
        var classifier = NetlinkClassifier()
        let readings = Self.readings([
            Self.address(NetlinkMessage.newAddress, [10, 30, 0, 2], index: 7),
            Self.address(NetlinkMessage.newAddress, [10, 30, 0, 2], index: 8),
            Self.address(NetlinkMessage.newAddress, [10, 30, 0, 2], prefix: 16, index: 7),
        ], classifier: &classifier)
        #expect(readings == [.event(.addressAdded), .event(.addressAdded), .event(.addressAdded)])
    }

    @Test func dumpRepliesSeedWithoutCountingAndEndWithDone() {
        var classifier = NetlinkClassifier(port: Self.ours)
        let done = NetlinkMessage(type: NetlinkMessage.done, flags: 2, sequence: 2, port: Self.ours, payload: [0, 0, 0, 0])
        let readings = Self.readings([
            Self.link(NetlinkMessage.newLink, index: 7, flags: 0x41, port: Self.ours, sequence: 1),
            Self.address(NetlinkMessage.newAddress, [10, 30, 0, 2], port: Self.ours, sequence: 2),
            done,
            Self.route(NetlinkMessage.newRoute, port: Self.ours, sequence: 3),
            // Notifications after the dump: the same address renewed, the same link still up, the same route.
            Self.address(NetlinkMessage.newAddress, [10, 30, 0, 2], port: 999, sequence: 17, preferred: 10),
            Self.link(NetlinkMessage.newLink, index: 7, flags: 0x41),
            Self.route(NetlinkMessage.newRoute),
        ], classifier: &classifier)
        #expect(readings == [.nothing, .nothing, .dumpDone(2), .nothing, .nothing, .nothing, .nothing])
    }

    @Test func linkCountsOnlyWhenItsStateFlips() {
        var classifier = NetlinkClassifier()
        let readings = Self.readings([
            Self.link(NetlinkMessage.newLink, index: 9, flags: 0),       // created down
            Self.link(NetlinkMessage.newLink, index: 9, flags: 0x1),     // up, no carrier yet
            Self.link(NetlinkMessage.newLink, index: 9, flags: 0x41),    // running: up
            Self.link(NetlinkMessage.newLink, index: 9, flags: 0x10041), // another attribute changed
            Self.link(NetlinkMessage.newLink, index: 9, flags: 0x1),     // carrier lost: down
            Self.link(NetlinkMessage.newLink, index: 9, flags: 0x41),
            Self.link(NetlinkMessage.deleteLink, index: 9, flags: 0x41), // gone while up
            Self.link(NetlinkMessage.deleteLink, index: 10, flags: 0),   // gone, never up
        ], classifier: &classifier)
        #expect(readings == [.nothing, .nothing, .event(.linkUp), .nothing, .event(.linkDown), .event(.linkUp),
                             .event(.linkDown), .nothing])
    }

    @Test func onlyDefaultRoutesOfTheMainTableCount() {
        var classifier = NetlinkClassifier()
        let readings = Self.readings([
            Self.route(NetlinkMessage.newRoute),                                 // default via 10.30.0.1
            Self.route(NetlinkMessage.newRoute),                                 // the same again
            Self.route(NetlinkMessage.newRoute, gateway: [10, 30, 0, 254]),      // replaced: a new gateway
            Self.route(NetlinkMessage.newRoute, destinationLength: 24),          // a subnet route
            Self.route(NetlinkMessage.newRoute, table: 255),                     // the local table
            Self.route(NetlinkMessage.newRoute, routeType: 2),                   // RTN_LOCAL
            Self.route(NetlinkMessage.newRoute, family: 10, gateway: [0xfe, 0x80] + [UInt8](repeating: 0, count: 13) + [1]),
            Self.route(NetlinkMessage.deleteRoute),
        ], classifier: &classifier)
        #expect(readings == [.event(.defaultRouteChanged), .nothing, .event(.defaultRouteChanged), .nothing, .nothing,
                             .nothing, .event(.defaultRouteChanged), .event(.defaultRouteChanged)])
    }

    @Test func resetForgetsWhatWasKnown() {
        var classifier = NetlinkClassifier()
        let message = Self.address(NetlinkMessage.newAddress, [10, 30, 0, 2])
        #expect(classifier.read(message) == .event(.addressAdded))
        #expect(classifier.read(message) == .nothing)
        classifier.reset()
        #expect(classifier.read(message) == .event(.addressAdded))
    }

    @Test func floodOfNewAddressesIsRememberedOnlyUpToTheLimit() {
        var classifier = NetlinkClassifier(limit: 100)
        var events = 0
        for index in 0..<5_000 {
            let bytes: [UInt8] = [10, 30, UInt8(index / 256 % 256), UInt8(index % 256)]
            if case .event = classifier.read(Self.address(NetlinkMessage.newAddress, bytes, index: UInt32(index / 65_536))) {
                events += 1
            }
        }
        #expect(events == 5_000)
        #expect(classifier.addresses.count == 100)
    }
}
